# SPDX-License-Identifier: BSD-3-Clause
"""Several GPUs in one process (two gnio_host gpudev devices stand in for two
GPUs here; the same code drives gnio_cuda devices): --gpu-map binds ports to
GPUs, each GPU gets its own consumer, pool and burst queues; per-GPU processed
counts add up to the total, conservation is exact, every pool is full at stop,
telemetry /gnio/gpus reports each GPU. Bad maps exit 2."""
import json
import os
import subprocess
import tempfile
import time

from gnio_run import LCORES4, TESTPMD, Checker, cleanup_prefix, eal_mem, load_json, run_testpmd

ck = Checker("multi-gpu")
tmp = tempfile.mkdtemp(prefix="gnio-mgpu-")
js = os.path.join(tmp, "out.json")
devs = ["--vdev=net_null0", "--vdev=net_null1", "--vdev=net_null2", "--vdev=net_null3",
        "--vdev=gnio_host0", "--vdev=gnio_host1"]
r = run_testpmd(devs, ["--forward-mode=5tswap", "--gpu=gnio_host0", "--gpu-map=2:gnio_host1,3:gnio_host1",
                       "--duration=3", "--json=" + js], lcores=LCORES4)
s = load_json(js)
g = {x["name"]: x for x in s["gpus"]}
ck.check(set(g) == {"gnio_host0", "gnio_host1"}, "two GPUs: %s" % s["gpus"])
ck.check(g.get("gnio_host0", {}).get("ports") == 2 and g.get("gnio_host1", {}).get("ports") == 2, "ports per GPU")
ck.check(all(x["processed"] > 0 for x in s["gpus"]), "both consumers processed packets")
ck.check(sum(x["processed"] for x in s["gpus"]) == s["processed"], "per-GPU counts add up")
ck.check(s["conserved"] and s["pools_full"] and len(s["pools"]) == 2, "conservation, two pools full: %s" % s["pools"])
ck.check("GPU gnio_host1: 2 port(s)" in r.stdout, "start-up names each GPU:\n" + r.stdout)

# Telemetry while running.
prefix = "gnio-mgpu-%d" % os.getpid()
p = subprocess.Popen([TESTPMD] + LCORES4 + eal_mem(prefix) + devs[:2] + devs[4:] +
                     ["--", "--gpu=gnio_host0", "--gpu-map=1:gnio_host1", "--duration=5"],
                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
time.sleep(2.5)
t = subprocess.run(["dpdk-telemetry.py", "-f", prefix], input="/gnio/gpus\n", capture_output=True, text=True,
                   timeout=30)
line = [l.strip().lstrip("-> ") for l in t.stdout.splitlines() if "/gnio/gpus" in l and "{" in l]
tel = json.loads(line[-1])["/gnio/gpus"] if line else {}
ck.check(set(tel) == {"gnio_host0", "gnio_host1"} and all(v["processed"] > 0 for v in tel.values()),
         "/gnio/gpus: %s" % tel)
p.communicate(timeout=60)
cleanup_prefix(prefix)
ck.check(p.returncode == 0, "telemetry run exit %d" % p.returncode)

for bad, needle in ((["--gpu-map=0:nosuchgpu"], "no GPU named"), (["--gpu-map=7:gnio_host1"], "not in use"),
                    (["--gpu-map=0"], "--gpu-map"), (["--gpu-map=x:gnio_host1"], "--gpu-map")):
    r = run_testpmd(devs, bad + ["--duration=1"], check=False, lcores=LCORES4)
    ck.check(r.returncode == 2 and needle in r.stderr, "%s: exit %d, %s" % (bad, r.returncode, r.stderr.strip()))
ck.finish()
