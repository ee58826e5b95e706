# SPDX-License-Identifier: BSD-3-Clause
"""examples/python on the module (no ctypes left): infer_dlpack.py answers every request of the
digits test set once with the model's class, and none of the malformed or badly summed ones
(gnio-infer-client check), through NumPy on kDLCPU
batches, finding the model by itself, with its command line kept (--udp-port, --framework,
--consumer, -- EAL-ARGS) and a bad option refused with one line, exit 2; live_plot.py samples a
running pipeline and saves the figure; cupy_kernel.py says in one line that it needs CuPy where
there is none (the GPU suite runs it)."""
import glob
import os
import subprocess
import sys
import tempfile

from gnio_run import Checker, eal_mem

SRC = os.environ.get("GNIO_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))
EX = os.path.join(SRC, "examples", "python")
CLIENT = os.path.join(SRC, "apps", "gnio-infer", "gnio-infer-client")
ck = Checker("python-examples")
tmp = tempfile.mkdtemp(prefix="gnio-py-examples-")


def run(script, *args, timeout=180):
    return subprocess.run([sys.executable, os.path.join(EX, script)] + list(args), capture_output=True, text=True,
                          timeout=timeout)


for f in glob.glob(os.path.join(EX, "*.py")):
    text = open(f).read()
    ck.check("ctypes" not in text and "import gnio" in text or os.path.basename(f) == "digits.py" and
             "ctypes" not in text, "%s: on the module, no ctypes" % os.path.basename(f))

req, ans = os.path.join(tmp, "req.pcap"), os.path.join(tmp, "ans.pcap")
made = subprocess.run([sys.executable, CLIENT, "requests", "--out", req, "--repeat", "3", "--bad"],
                      check=True, capture_output=True, text=True).stdout
# Every frame the client wrote (the test set three times over, and the bad ones among them).
n = int(made.split(": ")[1].split()[0])
r = run("infer_dlpack.py", "--framework", "numpy", "--consumer", "host", "--udp-port", "5005",
        "--batch-rows", "32", "--max-packets", str(n), "--", "-l", "0-1", *eal_mem(),
        "--vdev=net_pcap0,rx_pcap=%s,tx_pcap=%s" % (req, ans))
line = [x for x in r.stdout.splitlines() if x.startswith("infer_dlpack")]
print("\n".join(line))
ck.check(r.returncode == 0 and line and "numpy" in line[0] and "received %d" % n in line[0] and
         "conserved; pools full" in line[0], "infer_dlpack: exit %d: %s" % (r.returncode, (line or [r.stderr[-400:]])[0]))
c = subprocess.run([sys.executable, CLIENT, "check", "--requests", req, "--answers", ans], capture_output=True, text=True)
ck.check(c.returncode == 0, "every request answered once, right: %s" % c.stdout.strip()[-300:])

for args, want in ((["--udp-port", "x"], "--udp-port: invalid int value"),
                   (["--framework", "jax"], "--framework: invalid choice"),
                   (["--consumer", "cuda"], "--consumer: invalid choice"),
                   (["--", "--no-such-eal-option"], "the EAL did not start")):
    r = run("infer_dlpack.py", *args)
    ours = [x for x in r.stderr.splitlines() if x.startswith("infer_dlpack")]
    # (the EAL prints its own usage before)
    ck.check(r.returncode == 2 and len(ours) == 1 and want in ours[0] and r.stderr.strip().endswith(ours[0]) and
             (args[0] == "--" or r.stderr.startswith("infer_dlpack: ")), "%s: exit %d, %r" % (args, r.returncode, ours))

png = os.path.join(tmp, "stats.png")
r = run("live_plot.py", "--duration", "1.5", "--period", "0.2", "--out", png, "--",
        "--lcores", "(0-2)@(0-%d)" % ((os.cpu_count() or 1) - 1), *eal_mem(), "--vdev=net_null0,copy=0")
ck.check(r.returncode == 0 and "samples over" in r.stdout and "conserved; pools full" in r.stdout and
         os.path.getsize(png) > 10000, "live_plot: exit %d: %s %s" % (r.returncode, r.stdout[-300:], r.stderr[-300:]))

have_cupy = subprocess.run([sys.executable, "-c", "import cupy"], capture_output=True).returncode == 0
if not have_cupy:
    r = run("cupy_kernel.py", "--", "-l", "0-1")
    ck.check(r.returncode == 2 and r.stderr.strip() == "cupy_kernel: no CuPy here (it runs the kernel on the GPU)",
             "cupy_kernel without CuPy: %d %r" % (r.returncode, r.stderr))
ck.finish()
