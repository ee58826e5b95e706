# SPDX-License-Identifier: BSD-3-Clause
"""DPDK's own gpudev test program, dpdk-test-gpudev, with a gnio gpudev driver
loaded as a plugin (-d librte_gpu_gnio_DRIVER.so --vdev=gnio_DRIVER0), as any
DPDK application would load it. Every test must pass; it must find the device
and report memory it can give. With the CUDA driver: skipped (77) where there
is no CUDA GPU; the CPU-mapping test may fail only where GDRCopy is missing,
and then gnio must have said so, naming GDRCopy.
Usage: test_gpudev_plugin.py host|cuda [--out DIR]   (DIR: keep the output)"""
import argparse
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

from gnio_run import BUILD, Checker, eal_mem


def world_writable_above(path):
    """The EAL refuses a plugin below a world-writable directory (/tmp): is there one?"""
    d = os.path.dirname(os.path.abspath(path))
    while True:
        if os.stat(d).st_mode & stat.S_IWOTH:
            return True
        if d == "/":
            return False
        d = os.path.dirname(d)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("driver", choices=["host", "cuda"])
    ap.add_argument("--out")
    args = ap.parse_args()
    ck = Checker("gpudev-plugin-" + args.driver)
    prog = shutil.which("dpdk-test-gpudev") or os.path.join(os.path.dirname(BUILD), "bin", "dpdk-test-gpudev")
    plugin = os.path.join(BUILD, "drivers", "librte_gpu_gnio_%s.so" % args.driver)
    if not os.path.exists(prog):
        print("dpdk-test-gpudev not found (Debian's dpdk-dev)")
        sys.exit(1)
    tmp = None
    if world_writable_above(plugin):
        # A private directory the EAL accepts: /run is root's (the tests run as root).
        base = "/run" if os.access("/run", os.W_OK) else os.path.expanduser("~")
        tmp = tempfile.mkdtemp(prefix="gnio-plugin-", dir=base)
        os.chmod(tmp, 0o700)
        shutil.copy(plugin, tmp)
        plugin = os.path.join(tmp, os.path.basename(plugin))
    extra = os.environ.get("GNIO_EAL_EXTRA", "").split()
    cmd = [prog, "-l", "0-1"] + eal_mem() + extra + ["-d", plugin, "--vdev=gnio_%s0" % args.driver]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    out = r.stdout + r.stderr
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "dpdk-test-gpudev-%s.log" % args.driver), "w") as f:
            f.write(" ".join(cmd) + "\n" + out)
    print(out)
    found = re.search(r"DPDK found (\d+) GPUs", out)
    if args.driver == "cuda" and (found is None or found.group(1) == "0"):
        print("no CUDA GPU: skipped")
        sys.exit(77)
    ck.check(found is not None and found.group(1) == "1", "one GPU found: %s" % (found and found.group(0)))
    mem = re.search(r"Tot memory ([\d.]+) MB", out)
    ck.check(mem is not None and float(mem.group(1)) > 0, "memory reported: %s" % (mem and mem.group(0)))
    # Each test's name, then its verdict.
    tests = re.findall(r"=======> TEST: (.+?)\n(.*?)=======> TEST: (PASSED|FAILED)", out, re.S)
    names = [t[0] for t in tests]
    ck.check(len(tests) >= 5, "five tests ran: %s" % names)
    for name, body, verdict in tests:
        if verdict == "PASSED":
            continue
        if args.driver == "cuda" and "CPU visibility" in name:
            ck.check("GDRCopy" in out and "gdrdrv" in out,
                     "CPU mapping refused, and gnio named GDRCopy as what is missing")
            print("CPU mapping of GPU memory refused: GDRCopy missing (allowed)")
            continue
        ck.check(False, "test %s passed" % name)
    ck.check(r.returncode == 0 or args.driver == "cuda", "exit %d" % r.returncode)
    ck.finish()


if __name__ == "__main__":
    main()
