# SPDX-License-Identifier: BSD-3-Clause
"""Helpers for integration tests: run gnio-testpmd with EAL memory options that
work with and without hugepages, read its JSON summary."""
import json
import os
import subprocess
import sys

BUILD = os.environ.get("GNIO_BUILD", os.path.join(os.path.dirname(__file__), "..", "..", "build"))
TESTPMD = os.path.join(BUILD, "apps", "gnio-testpmd", "gnio-testpmd")
SKIP = 77


def have_hugepages():
    if os.environ.get("GNIO_NO_HUGE", "0") not in ("", "0"):
        return False
    try:
        free = [int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("HugePages_Free")][0]
    except (OSError, IndexError):
        return False
    return free >= 256 and "hugetlbfs" in open("/proc/mounts").read()


# Where a primary that others attach to keeps its memory: a secondary maps it at the same
# addresses. Left to itself, a sanitizer build's primary (ASan's shadow takes the low range EAL
# asks for first) put it among the mmap()s of 0x7f..., where a secondary's own libraries could
# already be ("Cannot get a virtual area"); after one such failure no secondary attached to that
# primary again and the primary hung at its exit (CI, 2026-12-01). Far above both.
BASE_VIRTADDR = "0x500000000000"


def eal_mem(prefix=None):
    """EAL memory arguments; a file prefix only when another process must attach."""
    if have_hugepages():
        args = ["-m", "256"]
        args += ["--file-prefix=" + prefix, "--base-virtaddr=" + BASE_VIRTADDR] if prefix else ["--in-memory"]
    else:
        args = ["--no-huge", "-m", "1024"] + (["--file-prefix=" + prefix] if prefix else ["--no-shconf"])
    return args + ["--no-pci", "--log-level=lib.eal:error"]


def cleanup_prefix(prefix):
    """A primary process's hugepage files outlive it (for secondaries): remove them."""
    import glob
    import shutil
    for f in glob.glob("/dev/hugepages/%smap_*" % prefix):
        try:
            os.unlink(f)
        except OSError:
            pass
    shutil.rmtree("/var/run/dpdk/" + prefix, ignore_errors=True)


# Four lcores on however many CPUs there are (2 on CI): oversubscribed, but each role has its own.
LCORES4 = ["--lcores", "0@0,1@1,2@0,3@1"]


def run_testpmd(eal, app, timeout=60, check=True, prefix=None, lcores=("-l", "0-1")):
    cmd = [TESTPMD] + list(lcores) + eal_mem(prefix) + eal + ["--"] + app
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        sys.stderr.write("command: %s\nstdout:\n%s\nstderr:\n%s\n" % (" ".join(cmd), r.stdout, r.stderr))
        raise SystemExit("FAIL: gnio-testpmd exited %d" % r.returncode)
    return r


def dumpcap(ck, prefix, iface, cap, *args):
    """One dpdk-dumpcap capture of @iface of the primary of @prefix into @cap; its output. A
    secondary maps the primary's memory at the same addresses, which can be taken in the new
    process ("Cannot get a virtual area"; see BASE_VIRTADDR): tried again. Seen under ASan too: a
    secondary that never starts capturing (killed after 30 s, then tried again)."""
    for attempt in range(3):
        try:
            r = subprocess.run(["dpdk-dumpcap", "--file-prefix=" + prefix, "-i", iface, "-w", cap] + list(args),
                               capture_output=True, text=True, timeout=30)
        except subprocess.TimeoutExpired as e:
            r = subprocess.CompletedProcess(e.cmd, -9, (e.stdout or b"").decode(errors="replace"),
                                            (e.stderr or b"").decode(errors="replace") + "(timed out: killed)")
            print("dpdk-dumpcap: captured nothing in 30 s; again (%d)" % (attempt + 1))
            continue
        if "Cannot get a virtual area" not in r.stdout + r.stderr:
            break
        print("dpdk-dumpcap: its memory could not be mapped where the primary's is; again (%d)" % (attempt + 1))
    ck.check(r.returncode == 0 and os.path.exists(cap), "dpdk-dumpcap %s:\n%s%s" % (args, r.stdout, r.stderr))
    return r.stdout + r.stderr


def captured(cap):
    """The packets of a pcapng file dpdk-dumpcap wrote (scapy's), none when there is no file."""
    from scapy.all import PcapNgReader   # (scapy.all: the layers decode, not raw bytes)
    if not os.path.exists(cap):
        return []
    with PcapNgReader(cap) as rd:
        return list(rd)


def load_json(path):
    with open(path) as f:
        return json.load(f)


class Checker:
    def __init__(self, name):
        self.name = name
        self.failures = 0

    def check(self, cond, what):
        if not cond:
            print("FAIL: " + what)
            self.failures += 1

    def finish(self):
        if self.failures:
            print("%s: %d check(s) failed" % (self.name, self.failures))
            sys.exit(1)
        print("%s: all checks passed" % self.name)
        sys.exit(0)
