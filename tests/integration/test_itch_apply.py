#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""bench/itch-apply on a small generated feed: the book's code (itch_book.h) on one GPU thread
gives gnio-itchgen's reference events, byte for byte, and one CPU core the same events and counts
(itch-apply compares the two itself). Exits 77 (skipped) where there is no GPU.

    test_itch_apply.py PATH-TO-itch-apply     (GNIO_SOURCE: the source tree)
"""
import os
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) != 2:
        print("usage: test_itch_apply.py PATH-TO-itch-apply", file=sys.stderr)
        return 2
    prog, src = sys.argv[1], os.environ.get("GNIO_SOURCE", os.path.join(os.path.dirname(__file__), "../.."))
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([sys.executable, os.path.join(src, "apps/gnio-itch/gnio-itchgen"), "--seed", "5",
                        "--messages", "20000", "--stocks", "50", "--pcap", d + "/f.pcap", "--store", d + "/f.itch",
                        "--bbo-csv", d + "/ref.csv"], check=True, stdout=subprocess.DEVNULL)
        r = subprocess.run([prog, d + "/f.itch", "--bbo-csv", d + "/out.csv"], capture_output=True, text=True)
        sys.stdout.write(r.stdout)
        sys.stderr.write(r.stderr)
        if r.returncode == 77:
            return 77
        if r.returncode != 0:
            print("FAIL: itch-apply exited %d" % r.returncode)
            return 1
        with open(d + "/out.csv") as a, open(d + "/ref.csv") as b:
            got, want = a.read(), b.read()
        if got != want:
            print("FAIL: the GPU thread's events (%d lines) differ from the reference's (%d lines)"
                  % (got.count("\n"), want.count("\n")))
            return 1
        print("ok: the GPU thread's %d events are the reference's, byte for byte" % want.count("\n"))
        return 0


if __name__ == "__main__":
    sys.exit(main())
