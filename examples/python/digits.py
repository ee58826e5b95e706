# SPDX-License-Identifier: BSD-3-Clause
"""gnio-infer's requests and answers (apps/gnio-infer/README.md) for the Python examples: the
model file, a request as a row of 64 pixels, an answer written over the request, turned around.

Request: UDP payload u32 request_id (big-endian) | 64 bytes of pixels (0-16). Answer: u32
request_id | u8 class | 3 bytes 0 | 10 x f32 scores (little-endian), IPv4 and UDP lengths and
checksums for it, the frame keeping its length. A request that is not 68 bytes of payload or
has a pixel above 16 is dropped as malformed, one whose IPv4 header checksum or (non-zero) UDP
checksum is wrong as bad_csum, as gnio-infer does; other packets as not handled.
"""
import os
import struct

import numpy as np

import gnio

HERE = os.path.dirname(os.path.abspath(__file__))
MALFORMED, NOT_HANDLED, BAD_CSUM = gnio.drop("malformed"), gnio.drop("not_handled"), gnio.drop("bad_csum")


def find_model():
    """The digits model: gnio's installed copy, else the one beside gnio-infer's sources."""
    for p in (os.path.join(gnio.DATADIR, "digits-mlp.bin"),
              os.path.join(HERE, "..", "..", "apps", "gnio-infer", "digits-mlp.bin")):
        if os.path.exists(p):
            return os.path.normpath(p)
    raise SystemExit("no digits-mlp.bin in %s nor beside gnio-infer's sources: give --model"
                     % gnio.DATADIR)


def load_model(path):
    """(w1 [32][64], b1 [32], w2 [10][32], b2 [10]) as float32, from gnio-infer's file."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:8] != b"GNIOMLP1" or len(raw) < 24 or struct.unpack("<4I", raw[8:24]) != (64, 32, 10, 0) or \
            len(raw) < 24 + 4 * 2410:
        raise SystemExit("%s: not a 64-32-10 gnio MLP" % path)
    f = np.frombuffer(raw[24:24 + 4 * 2410], dtype="<f4")
    return f[:2048].reshape(32, 64), f[2048:2080], f[2080:2400].reshape(10, 32), f[2400:2410]


def csum(b, s=0):
    if len(b) % 2:
        b += b"\0"
    for i in range(0, len(b), 2):
        s += b[i] << 8 | b[i + 1]
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s


class Requests:
    """row() and answer() of a gnio.BatchHandler for requests to UDP port @p port (0: any)."""

    def __init__(self, port):
        self.port = port

    def parse(self, data):
        """(ihl, None) for a request, else (None, its verdict)."""
        if len(data) < 34 or data[12:14] != b"\x08\x00" or data[14] >> 4 != 4:
            return None, NOT_HANDLED
        ihl = (data[14] & 15) * 4
        u = 14 + ihl
        if ihl < 20 or data[23] != 17 or struct.unpack(">H", data[20:22])[0] & 0x1fff or len(data) < u + 8 or \
                (self.port and struct.unpack(">H", data[u + 2:u + 4])[0] != self.port):
            return None, NOT_HANDLED
        if struct.unpack(">H", data[u + 4:u + 6])[0] != 76 or struct.unpack(">H", data[16:18])[0] != ihl + 76 or \
                len(data) < u + 76 or max(data[u + 12:u + 76]) > 16:
            return None, MALFORMED
        # The IPv4 header's checksum, and the UDP checksum over the pseudo-header where one was sent.
        if csum(data[14:u]) != 0xffff or (data[u + 6:u + 8] != b"\0\0" and
                                           csum(data[u:u + 76], csum(data[26:34]) + 17 + 76) != 0xffff):
            return None, BAD_CSUM
        return ihl, None

    def row(self, pkt, row, rx_port, tx_port):
        ihl, v = self.parse(pkt.tobytes())
        if ihl is None:
            return v
        row[:] = pkt[14 + ihl + 12:14 + ihl + 76]
        return 0

    def answer(self, pkt, scores, rx_port, tx_port):
        data = pkt.tobytes()
        ihl, _ = self.parse(data)
        u = 14 + ihl
        sc = scores.astype("<f4").tobytes()
        cls = int(np.argmax(scores))
        ip = bytearray(data[14:u])
        ip[2:4] = struct.pack(">H", ihl + 56)
        ip[10:12] = b"\0\0"
        ip[12:16], ip[16:20] = data[30:34], data[26:30]
        ip[10:12] = struct.pack(">H", ~csum(bytes(ip)) & 0xffff)
        udp = bytearray(data[u + 2:u + 4] + data[u:u + 2] + struct.pack(">HH", 56, 0) + data[u + 8:u + 12] +
                        bytes([cls, 0, 0, 0]) + sc)
        c = ~csum(bytes(udp), csum(bytes(ip[12:20])) + 17 + 56) & 0xffff
        udp[6:8] = struct.pack(">H", c or 0xffff)
        frame = data[6:12] + data[0:6] + data[12:14] + bytes(ip) + bytes(udp)
        pkt[:len(frame)] = np.frombuffer(frame, np.uint8)
        return rx_port
