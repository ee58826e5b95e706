#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""gnio-trader's model on the CPU against trader_ref.py, the Python reference written from
apps/gnio-trader/README.md: on a gnio-itchgen feed's BBO file (with malformed lines among its
lines, counted and skipped, and its last line without a newline), trader-model's feature row of every line and its logits of every
N-th line, for each of the three committed weight files, equal to the reference's bit for bit,
from both builds of the CPU model (AVX2 and FMA, and any x86-64: TR_CPU_ANY=1).
Weight files that are wrong (cut short, a hidden size this build does not read, a weight that is
not finite, not a weight file) are refused with one line naming what is wrong, and bad options
exit 2 with one line.

--gpu (GPU suite; exits 77 without a CUDA GPU): trader-model --gpu on the same feed for each size:
the GPU's rows and logits equal the CPU's bit for bit, and the GPU's time per request inside the
kernel is printed (trader-model's lines).
"""
import os
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

import trader_ref as ref

BUILD = os.environ.get("GNIO_BUILD", os.path.join(os.path.dirname(__file__), "..", "..", "build"))
SRC = os.environ.get("GNIO_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))
MODEL = os.path.join(BUILD, "apps", "gnio-trader", "trader-model")
ITCHGEN = os.path.join(SRC, "apps", "gnio-itch", "gnio-itchgen")
WEIGHTS = os.path.join(SRC, "apps", "gnio-trader", "models")
# Predictions checked a size (every N-th line of the feed): the reference's fmaf is numpy, and a
# prediction of hidden 256 is 26 million of them.
CHECK = {32: (7, 300), 128: (29, 60), 256: (97, 12)}
# Lines trader-model must count as malformed and skip: too few or many fields, not a number, a
# locate past 16 bits, an empty line, a line longer than its buffer (its seventh field cut there).
MALFORMED = ["1,2,3\n", "x,1,2,3,4,5,6\n", "5,70000,1,1,1,1,1\n", "5,1,1,1,1,1,1,1\n", "\n",
             "1,2," + "9" * 300 + ",4,5,6,7\n"]


def run(*args, expect=0, env=None):
    p = subprocess.run([MODEL] + [str(a) for a in args], capture_output=True, text=True, timeout=600,
                       env=env)
    if p.returncode != expect:
        sys.exit("FAIL: trader-model %s: exit %d, expected %d\n%s%s" % (" ".join(map(str, args)),
                 p.returncode, expect, p.stdout, p.stderr))
    return p


def refused(path, what, d):
    p = run("--model", path, "--bbo-csv", os.path.join(d, "bbo.csv"), expect=1)
    lines = p.stderr.strip().split("\n")
    if len(lines) != 1 or what not in lines[0]:
        sys.exit("FAIL: %s: expected one line saying %r, got %r" % (path, what, p.stderr))
    print("ok: refused, %s" % lines[0])


def bad_files(d):
    good = open(os.path.join(WEIGHTS, "lstm-h32.bin"), "rb").read()
    cases = [("short.bin", good[:1000], "1000 bytes, a model of hidden 32 has"),
             ("magic.bin", b"GNIOMLP1" + good[8:], "not a gnio-trader weight file"),
             ("hidden.bin", good[:20] + struct.pack("<I", 100) + good[24:], "hidden is 100"),
             ("window.bin", good[:28] + struct.pack("<I", 65) + good[32:], "window is 65"),
             ("nan.bin", good[:64 + 4 * 5] + struct.pack("<f", float("nan")) + good[64 + 4 * 6:],
              "W0[0][5] is not a finite number")]
    for name, data, what in cases:
        path = os.path.join(d, name)
        open(path, "wb").write(data)
        refused(path, what, d)
    refused(d, "Is a directory", d)          # (a directory opens for reading: its size is not a file's)
    for args in (["--bogus"], ["--model", "x"], ["--model", "x", "--bbo-csv", "y", "--every", "0"],
                 ["--model", "x", "--bbo-csv", "y", "--max", "-1"]):
        p = run(*args, expect=2)
        if len(p.stderr.strip().split("\n")) != 1:
            sys.exit("FAIL: %s: not one line: %r" % (args, p.stderr))
    print("ok: bad options exit 2 with one line")


def cpu(d, rows):
    """Every row, and each size's predictions, against the reference."""
    fed = os.path.join(d, "bbo-malformed.csv")
    lines = open(os.path.join(d, "bbo.csv")).readlines()
    with open(fed, "w") as fh:
        for i, line in enumerate(lines):
            # The file's last line without its newline: a row all the same.
            fh.write(line if i + 1 < len(lines) else line.rstrip("\n"))
            if i % 1000 == 3 and i // 1000 < len(MALFORMED):
                fh.write(MALFORMED[i // 1000])
    bad = min(len(MALFORMED), (len(lines) + 996) // 1000)
    for h, (every, limit) in CHECK.items():
        out, rows_out = os.path.join(d, "out-%d.csv" % h), os.path.join(d, "rows-%d.csv" % h)
        p = run("--model", os.path.join(WEIGHTS, "lstm-h%d.bin" % h), "--bbo-csv", fed, "--out", out,
                "--rows-out", rows_out, "--hex", "--every", every, "--max", limit)
        want = "%d lines: %d rows, %d malformed (skipped); %d predictions (hidden %d, window 32)" % (
            len(lines) + bad, len(lines), bad, limit, h)
        if want not in p.stderr:
            sys.exit("FAIL: hidden %d: expected %r in %r" % (h, want, p.stderr))
        got = [line.rstrip("\n").split(",") for line in open(rows_out)]
        if len(got) != len(rows):
            sys.exit("FAIL: %d rows, the reference has %d" % (len(got), len(rows)))
        for (seq, loc, r), g in zip(rows, got):
            if [str(seq), str(loc)] + [ref.bits(x) for x in r] != g:
                sys.exit("FAIL: the row of msg_seq %d differs:\n  C   %s\n  ref %s" % (
                    seq, ",".join(g), ",".join(ref.bits(x) for x in r)))
        m = ref.Model(os.path.join(WEIGHTS, "lstm-h%d.bin" % h))
        wins = ref.windows(rows, m.k, every, limit)
        t0 = time.time()
        y = np.concatenate([m.run(np.stack([w[2] for w in wins[i:i + 64]])) for i in range(0, len(wins), 64)])
        got = [line.rstrip("\n").split(",") for line in open(out)]
        if len(got) != len(wins):
            sys.exit("FAIL: hidden %d: %d predictions, the reference made %d" % (h, len(got), len(wins)))
        for (seq, loc, _), yy, g in zip(wins, y, got):
            if [str(seq), str(loc)] + [ref.bits(v) for v in yy] != g:
                sys.exit("FAIL: hidden %d: the logits of msg_seq %d differ:\n  C   %s\n  ref %s" % (
                    h, seq, ",".join(g), ",".join([str(seq), str(loc)] + [ref.bits(v) for v in yy])))
        print("ok: hidden %d: %d rows and %d predictions (every %d-th line) the reference's to the bit "
              "(reference %.1f s)" % (h, len(rows), len(wins), every, time.time() - t0))
        # The CPU model's build for any x86-64 (glibc's fmaf, no vectors): the same bits.
        any_out = os.path.join(d, "out-any-%d.csv" % h)
        run("--model", os.path.join(WEIGHTS, "lstm-h%d.bin" % h), "--bbo-csv", fed, "--out", any_out,
            "--hex", "--every", every, "--max", limit, env=dict(os.environ, TR_CPU_ANY="1"))
        if open(any_out).read() != open(out).read():
            sys.exit("FAIL: hidden %d: the build for any CPU gives other logits than the FMA build" % h)
        print("ok: hidden %d: the build for any x86-64 gives the same bits" % h)


def gpu(d):
    status = 0
    for h in CHECK:
        p = subprocess.run([MODEL, "--model", os.path.join(WEIGHTS, "lstm-h%d.bin" % h), "--bbo-csv",
                            os.path.join(d, "bbo.csv"), "--gpu"], capture_output=True, text=True, timeout=600)
        sys.stdout.write(p.stdout)
        sys.stderr.write(p.stderr)
        if p.returncode == 77:
            return 77
        if p.returncode != 0 or ", 0 features differ;" not in p.stdout or ", 0 logits differ" not in p.stdout:
            print("FAIL: hidden %d: the GPU's rows or logits are not the CPU's (exit %d)" % (h, p.returncode))
            status = 1
        else:
            print("ok: hidden %d: the GPU's rows and logits are the CPU's to the bit" % h)
    return status


def main():
    on_gpu = sys.argv[1:] == ["--gpu"]
    if sys.argv[1:] not in ([], ["--gpu"]):
        sys.exit("usage: test_trader_model.py [--gpu]")
    with tempfile.TemporaryDirectory(prefix="gnio-trader-") as d:
        subprocess.run([sys.executable, ITCHGEN, "--seed", "21", "--messages", "30000", "--pcap",
                        os.path.join(d, "feed.pcap"), "--bbo-csv", os.path.join(d, "bbo.csv")],
                       check=True, stdout=subprocess.DEVNULL, timeout=300)
        if on_gpu:
            return gpu(d)
        bad_files(d)
        cpu(d, ref.rows_of_csv(os.path.join(d, "bbo.csv")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
