#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""gnio-trader's feature row and model in Python (numpy), written from apps/gnio-trader/README.md's
definitions: the second implementation the C model is held to, bit for bit.

fmaf is exact here: a float32 product is exact in float64 (24 + 24 bits); the sum with the
addend is rounded to float64 with the error kept (TwoSum) and made round-to-odd (truncated toward
zero, its last bit set when inexact), then rounded once to float32: the correctly rounded
a * b + c (53 >= 24 + 2 bits). Every other float32
operation is numpy's float32 arithmetic (IEEE, rounded to nearest).

As a program: --activations prints how far tanh and sigmoid are from the true functions."""
import struct
import sys

import numpy as np

F = 12
OUT = 3
HEADER = 64
f32 = np.float32


def fbits(h):
    """The float32 of 8 hex digits of bits."""
    return np.frombuffer(struct.pack("<I", int(h, 16)), dtype="<f4")[0]


T = fbits("40fcf84f")
A = [fbits(h) for h in ("3ba059dc", "3a270ded", "3779434a", "335c0041", "aebd37ff", "2a61337e", "a59f25c0")]
B = [fbits(h) for h in ("3ba059dd", "3b14aa05", "38f895d6", "35a0d3d8")]


def fma(a, b, c):
    """a * b + c rounded once to float32 (arrays or scalars of float32, broadcast)."""
    a = np.asarray(a, dtype=f32).astype(np.float64)
    b = np.asarray(b, dtype=f32).astype(np.float64)
    c = np.asarray(c, dtype=f32).astype(np.float64)
    p = a * b                          # exact
    s = p + c
    bb = s - p
    e = (p - (s - bb)) + (c - bb)      # TwoSum: p + c = s + e exactly
    # Round to odd: when inexact, s truncated toward zero with its last bit set.
    bits = np.asarray(s).view(np.int64)
    inexact = e != 0
    bits = (bits - (inexact & ((e > 0) != (s > 0)))) | inexact
    s = bits.view(np.float64)
    return s.astype(f32)


def tanh(x):
    x = np.asarray(x, dtype=f32)
    xc = np.fmin(np.fmax(x, -T), T)
    x2 = xc * xc
    p = fma(x2, A[6], A[5])
    for a in (A[4], A[3], A[2], A[1], A[0]):
        p = fma(x2, p, a)
    p = xc * p
    q = fma(x2, B[3], B[2])
    q = fma(x2, q, B[1])
    q = fma(x2, q, B[0])
    return p / q


def sigmoid(x):
    x = np.asarray(x, dtype=f32)
    return fma(f32(0.5), tanh(f32(0.5) * x), f32(0.5))


def dot8(w, v):
    """dot8 of rows w [R][n] with vectors v [N][n]: [N][R]. Term k goes to partial k mod 8."""
    n = w.shape[1]
    p = np.zeros((v.shape[0], w.shape[0], 8), dtype=f32)
    for k0 in range(0, n, 8):
        m = min(8, n - k0)
        p[:, :, :m] = fma(w[None, :, k0:k0 + m], v[:, None, k0:k0 + m], p[:, :, :m])
    q0, q1, q2, q3 = p[..., 0] + p[..., 4], p[..., 1] + p[..., 5], p[..., 2] + p[..., 6], p[..., 3] + p[..., 7]
    return (q0 + q2) + (q1 + q3)


class Model:
    """A weight file (README.md, "The weight file")."""

    def __init__(self, path):
        raw = open(path, "rb").read()
        if raw[:8] != b"GNIOLSTM":
            raise ValueError("%s: not a gnio-trader weight file" % path)
        ver, hb, nf, h, layers, k, nout, layout = struct.unpack("<8I", raw[8:40])
        if (ver, hb, nf, layers, nout, layout) != (1, HEADER, F, 2, OUT, 1):
            raise ValueError("%s: not a model this reference reads" % path)
        self.h, self.k = h, k
        w = np.frombuffer(raw[HEADER:], dtype="<f4").astype(f32)
        g = 4 * h
        shapes = [("W0", (g, F)), ("U0", (g, h)), ("b0", (g,)), ("W1", (g, h)), ("U1", (g, h)),
                  ("b1", (g,)), ("Wy", (OUT, h)), ("by", (OUT,))]
        off = 0
        for name, shp in shapes:
            size = int(np.prod(shp))
            setattr(self, name, w[off:off + size].reshape(shp))
            off += size
        if off != len(w):
            raise ValueError("%s: %d floats, expected %d" % (path, len(w), off))

    def layer(self, W, U, b, v, h, c):
        hh = self.h
        z = (b[None, :] + dot8(W, v)) + dot8(U, h)
        i = sigmoid(z[:, 0:hh])
        f = sigmoid(z[:, hh:2 * hh])
        g = tanh(z[:, 2 * hh:3 * hh])
        o = sigmoid(z[:, 3 * hh:4 * hh])
        c = fma(f, c, i * g)
        return o * tanh(c), c

    def run(self, win):
        """Logits [N][3] of windows win [N][K][F] (float32)."""
        n = win.shape[0]
        h0 = np.zeros((n, self.h), dtype=f32)
        c0, h1, c1 = h0.copy(), h0.copy(), h0.copy()
        for t in range(self.k):
            h0, c0 = self.layer(self.W0, self.U0, self.b0, win[:, t, :], h0, c0)
            h1, c1 = self.layer(self.W1, self.U1, self.b1, h0, h1, c1)
        return self.by[None, :] + dot8(self.Wy, h1)


def ticks(d, u):
    d = max(-64 * u, min(64 * u, d))
    return f32(d) / f32(u)


def exact(v):
    return f32(min(v, (1 << 24) - 1))


def rel(x, y):
    s = x + y
    return (x - y) / s if s > 0 else f32(0)


def row(now, prev):
    """The feature row (README.md's table) of BBO now = (ts, bid, bshares, ask, ashares) after prev
    (None for a stock's first change)."""
    ts, bid, bs, ask, as_ = now
    hb, ha = bid != 0, ask != 0
    b = exact(bs) if hb else f32(0)
    a = exact(as_) if ha else f32(0)
    r = [f32(0)] * F
    if hb and ha:
        r[0] = ticks(ask - bid, 100)
    r[4] = b / (b + f32(1000))
    r[5] = a / (a + f32(1000))
    r[6] = rel(b, a)
    r[10] = f32(1) if hb else f32(0)
    r[11] = f32(1) if ha else f32(0)
    if prev is None:
        r[9] = f32(1)
        return r
    pts, pbid, pbs, pask, pas = prev
    phb, pha = pbid != 0, pask != 0
    if hb and ha and phb and pha:
        r[1] = ticks(bid + ask - pbid - pask, 200)
    if hb and phb:
        r[2] = ticks(bid - pbid, 100)
    if ha and pha:
        r[3] = ticks(ask - pask, 100)
    r[7] = rel(b, exact(pbs) if phb else f32(0))
    r[8] = rel(a, exact(pas) if pha else f32(0))
    d = exact((ts - pts) // 1000 if ts > pts else 0)
    r[9] = d / (d + f32(1000))
    return r


def rows_of_csv(path):
    """(msg_seq, locate, row) of each line of a gnio-itchgen --bbo-csv file."""
    last = {}
    out = []
    with open(path) as fh:
        for line in fh:
            seq, loc, ts, bid, bs, ask, as_ = (int(x) for x in line.split(","))
            now = (ts, bid, bs, ask, as_)
            out.append((seq, loc, row(now, last.get(loc))))
            last[loc] = now
    return out


def windows(rows, k, every=1, limit=None):
    """(msg_seq, locate, window [K][F]) every every-th row: the stock's last k rows, zeros first."""
    hist = {}
    out = []
    for i, (seq, loc, r) in enumerate(rows):
        h = hist.setdefault(loc, [])
        h.append(r)
        if i % every == 0 and (limit is None or len(out) < limit):
            last = h[-k:]
            w = np.zeros((k, F), dtype=f32)
            w[k - len(last):] = np.array(last, dtype=f32)
            out.append((seq, loc, w))
    return out


def bits(x):
    return "%08x" % np.asarray(x, dtype="<f4").view("<u4")


def activations():
    x = np.linspace(-10, 10, 400001).astype(f32)
    et = np.abs(tanh(x).astype(np.float64) - np.tanh(x.astype(np.float64))).max()
    es = np.abs(sigmoid(x).astype(np.float64) - 1 / (1 + np.exp(-x.astype(np.float64)))).max()
    print("tanh: within %.3g of tanh; sigmoid: within %.3g of the logistic function, over [-10, 10]"
          % (et, es))


if __name__ == "__main__":
    if sys.argv[1:] == ["--activations"]:
        activations()
    else:
        sys.exit("usage: trader_ref.py --activations")
