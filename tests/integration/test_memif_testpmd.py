# SPDX-License-Identifier: BSD-3-Clause
"""gnio-testpmd between two net_memif links with the real dpdk-testpmd as traffic
source and sink (two processes): testpmd sends a first burst on each link and
forwards whatever comes back (io); gnio forwards port 0 <-> 1 through its burst
queue. Packets loop until testpmd stops. Both sides' counts must agree (up to
what memif rings held at disconnect) and gnio's conservation law must hold."""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

from gnio_run import SKIP, TESTPMD, Checker, eal_mem, load_json

ck = Checker("memif-testpmd")
dpdk_testpmd = shutil.which("dpdk-testpmd")
if dpdk_testpmd is None:
    print("dpdk-testpmd not installed (Debian package dpdk)")
    raise SystemExit(SKIP)
tmp = tempfile.mkdtemp(prefix="gnio-memif-")
socks = [os.path.join(tmp, s) for s in ("a.sock", "b.sock")]
js = os.path.join(tmp, "gnio.json")

tp = subprocess.Popen([dpdk_testpmd, "-l", "0-1"] + eal_mem() +
                      ["--vdev=net_memif0,role=server,socket=" + socks[0],
                       "--vdev=net_memif1,role=server,socket=" + socks[1], "--",
                       "--forward-mode=io", "--tx-first", "--stats-period=60", "--burst=32"],
                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
time.sleep(2)
gn = subprocess.Popen([TESTPMD, "-l", "0-1"] + eal_mem() +
                      ["--vdev=net_memif0,role=client,socket=" + socks[0],
                       "--vdev=net_memif1,role=client,socket=" + socks[1], "--",
                       "--forward-mode=io", "--duration=8", "--json=" + js],
                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
time.sleep(5)
tp.send_signal(signal.SIGINT)
tp_out, _ = tp.communicate(timeout=30)
gn_out, _ = gn.communicate(timeout=30)
ck.check(gn.returncode == 0, "gnio-testpmd exit %d:\n%s" % (gn.returncode, gn_out))
m = re.search(r"Accumulated forward statistics.*?RX-packets:\s+(\d+).*?TX-packets:\s+(\d+)", tp_out, re.S)
ck.check(m is not None, "dpdk-testpmd printed its forward statistics:\n" + tp_out[-2000:])
if m is not None and gn.returncode == 0:
    tp_rx, tp_tx = int(m.group(1)), int(m.group(2))
    s = load_json(js)
    g_rx, g_tx = s["total"]["rx"], s["total"]["tx"]
    print("dpdk-testpmd rx %d tx %d (with its first burst 64); gnio rx %d tx %d" % (tp_rx, tp_tx, g_rx, g_tx))
    ck.check(g_rx > 1000 and tp_rx > 1000, "traffic looped both ways")
    # What testpmd sent, gnio received, except what memif rings held when testpmd left.
    ck.check(tp_tx + 64 >= g_rx >= tp_tx + 64 - 2048, "gnio received what testpmd sent")
    ck.check(g_tx >= tp_rx >= g_tx - 2048, "testpmd received what gnio sent")
    ck.check(s["conserved"] and s["pools_full"], "gnio conservation and mempool")
ck.finish()
