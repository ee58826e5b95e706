# SPDX-License-Identifier: BSD-3-Clause
"""gnio-bench when its programs cannot start as asked (issue 54, item 15), another DPDK process
(an idle gnio-testpmd -i) holding what they need:

 - the hugepages: each run reserves 2048 MiB; with fewer free, both gnio-testpmd and
   dpdk-testpmd failed to start (the bench exited 1, the baseline shown as 0.00 Mpps). The
   bench must fall back to --no-huge, say so, and give both programs' figures;
 - dpdk-testpmd's file prefix (its EAL cannot take the lock): the baseline is a failed point
   with the EAL's reason, in the table and in results.json, and the bench exits 1; never a
   rate of 0.

Skipped (77) without dpdk-testpmd, or (the first part) without hugepages this process can map."""
import contextlib
import importlib.machinery
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from gnio_run import SKIP, TESTPMD, Checker, cleanup_prefix

SRC = os.environ.get("GNIO_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))
GBENCH = os.path.join(SRC, "apps", "gnio-bench", "gnio-bench")
QUICK = ["--quick", "--sizes", "64", "--warmup", "1", "--window", "1"]


def meminfo(key):
    return int([l.split()[1] for l in open("/proc/meminfo") if l.startswith(key + ":")][0])


def hold(prefix, eal):
    """An idle DPDK primary (gnio-testpmd at its prompt, nothing forwarding) with prefix @p prefix."""
    cmd = [TESTPMD, "-l", "0-1", "--file-prefix=" + prefix, "--no-pci", "--log-level=lib.eal:error",
           "--vdev=net_null0"] + eal + ["--", "-i"]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    t0 = time.time()
    seen = ""
    while time.time() - t0 < 60 and proc.poll() is None:
        line = proc.stdout.readline()
        seen += line
        if "Interactive" in line or "testpmd>" in line or "gnio>" in line or "forward-mode" in line:
            break
    time.sleep(0.5)
    return proc, seen


def release(proc, prefix):
    try:
        proc.stdin.write("quit\n")
        proc.stdin.flush()
        proc.wait(timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()
        proc.wait()
    cleanup_prefix(prefix)


def load_gbench():
    """gnio-bench as a module: it runs in this process, so its runs' file prefixes (named after
    its process id) are known here."""
    loader = importlib.machinery.SourceFileLoader("gnio_bench", GBENCH)
    spec = importlib.util.spec_from_loader("gnio_bench", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def bench(gb, out, nohuge):
    """gnio-bench --quick at 64 B: its exit status, what it printed, its points."""
    os.environ["GNIO_NO_HUGE"] = nohuge
    sys.argv = [GBENCH] + QUICK + ["--out", out]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        rc = gb.main()
    text = buf.getvalue()
    print(text)
    res = os.path.join(out, "results.json")
    pts = json.load(open(res))["points"] if os.path.exists(res) else []
    return rc, text, pts


def main():
    ck = Checker("gbench-start")
    if shutil.which("dpdk-testpmd") is None:
        print("no dpdk-testpmd: skipped")
        sys.exit(SKIP)
    tmp = tempfile.mkdtemp(prefix="gnio-gbench-start-")
    gb = load_gbench()
    ran = 0

    # 1. The hugepages held: all but 512 MiB of what is free (a run wants 2048).
    free_mb = meminfo("HugePages_Free") * meminfo("Hugepagesize") // 1024
    if free_mb >= 1024 and " hugetlbfs " in open("/proc/mounts").read():
        prefix = "gnio-hold-%d" % os.getpid()
        holder, seen = hold(prefix, ["-m", str(free_mb - 512)])
        now_mb = meminfo("HugePages_Free") * meminfo("Hugepagesize") // 1024
        if holder.poll() is not None or now_mb >= 2048:
            print("could not hold the hugepages (%d MiB free now): part 1 not run\n%s" % (now_mb, seen))
        else:
            ran += 1
            rc, out, pts = bench(gb, os.path.join(tmp, "held"), "0")
            ck.check(rc == 0, "hugepages held: gnio-bench exit %d" % rc)
            ck.check("running with --no-huge" in out, "hugepages held: the fallback not said\n" + out)
            for prog in ("dpdk-testpmd", "gnio-testpmd"):
                p = [x for x in pts if x["program"] == prog]
                ck.check(p and all(x.get("processed_mpps", 0) > 0 and x.get("eal_mem") == "no-huge" for x in p),
                         "hugepages held: %s's points %s" % (prog, p))
        release(holder, prefix)
    else:
        print("%d MiB of hugepages free (1024 needed to hold some): part 1 not run" % free_mb)

    # 2. dpdk-testpmd's prefix held (no hugepages needed for that): its EAL cannot start.
    prefix = "gbench-tp-%d" % os.getpid()
    holder, seen = hold(prefix, ["--no-huge", "-m", "512"])
    if holder.poll() is not None:
        print("could not hold the prefix %s: part 2 not run\n%s" % (prefix, seen))
    else:
        ran += 1
        rc, out, pts = bench(gb, os.path.join(tmp, "prefix"), "1")
        tp = [x for x in pts if x["program"] == "dpdk-testpmd"]
        rows = [l for l in out.splitlines() if "dpdk-testpmd" in l and l.startswith("matrix")]
        ck.check(rc == 1, "prefix held: gnio-bench exit %d, want 1 (a failed point)" % rc)
        ck.check(tp and all("processed_mpps" not in x and x.get("error") for x in tp),
                 "prefix held: dpdk-testpmd's points are not failures with a reason: %s" % tp)
        ck.check(rows and all("failed: " in l and "0.00" not in l for l in rows),
                 "prefix held: dpdk-testpmd's row:\n%s" % "\n".join(rows))
        print("dpdk-testpmd's failure as the bench says it: %s" % (rows[0] if rows else "-"))
        g = [x for x in pts if x["program"] == "gnio-testpmd"]
        ck.check(g and all(x.get("processed_mpps", 0) > 0 for x in g), "prefix held: gnio's points %s" % g)
    release(holder, prefix)
    shutil.rmtree(tmp, ignore_errors=True)
    if ran == 0:
        print("neither part could run: skipped")
        sys.exit(SKIP)
    ck.finish()


if __name__ == "__main__":
    main()
