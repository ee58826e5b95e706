# SPDX-License-Identifier: BSD-3-Clause
"""Every forwarding engine, byte for byte: scapy writes the input pcap (valid and
malformed packets), an independent model of the engine written here with scapy
predicts the output, gnio-testpmd runs on net_pcap, and the output pcap must
equal the prediction exactly; drops must match by reason.
With --chained the jumbo frames are received as chained mbufs (engines see their
first segment and validate lengths against the whole packet; csum sums every
segment, so a flipped byte in any of them is bad_csum): same expectations.
With --inline-bytes N the packets go through the latency queue (their first N
bytes in flagged lines, the rest read from packet memory): the same results.
Usage: test_engines_pcap.py ENGINE [--chained] [--inline-bytes N] [--consumer NAME --gpu NAME --mem MODE]"""
import argparse
import os
import struct
import tempfile

from scapy.all import ARP, ICMP, IP, TCP, UDP, Dot1Q, Ether, IPv6, Raw, RawPcapReader, wrpcap  # noqa
import logging
logging.getLogger("scapy.runtime").setLevel(logging.ERROR)

from gnio_run import Checker, load_json, run_testpmd

PEER = "02:00:00:00:00:00"


def corpus():
    """Valid packets of every kind the engines look at, then malformed ones."""
    base = Ether(src="00:11:22:33:44:55", dst="66:77:88:99:aa:bb")
    pkts = [
        base / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=1234, dport=5678) / Raw(b"x" * 18),
        base / IP(src="10.0.0.3", dst="10.0.0.4") / TCP(sport=80, dport=443) / Raw(b"y" * 10),
        base / IPv6(src="2001:db8::1", dst="2001:db8::2") / UDP(sport=7, dport=9) / Raw(b"z" * 8),
        base / Dot1Q(vlan=5) / IP(src="10.1.0.1", dst="10.1.0.2") / UDP(sport=1, dport=2) / Raw(b"v" * 20),
        base / Dot1Q(vlan=5) / Dot1Q(vlan=6) / IP(src="10.2.0.1", dst="10.2.0.2") / TCP(sport=3, dport=4),
        base / IP(src="192.168.1.1", dst="192.168.1.2") / ICMP(type=8, id=7, seq=1) / Raw(b"ping" * 8),
        base / IP(src="192.168.1.3", dst="192.168.1.4") / ICMP(type=0, id=7, seq=1) / Raw(b"pong"),
        Ether(src="00:11:22:33:44:55", dst="ff:ff:ff:ff:ff:ff") /
        ARP(op=1, hwsrc="00:11:22:33:44:55", psrc="10.9.0.1", pdst="10.9.0.2"),
        base / IP(src="10.0.0.5", dst="10.0.0.6", options=b"\x01\x01\x01\x00") / UDP(sport=5, dport=6) / Raw(b"o" * 12),
        base / IP(src="10.0.0.7", dst="10.0.0.8", frag=10, proto=17) / Raw(b"f" * 16),
        Ether(src="00:11:22:33:44:55", dst="66:77:88:99:aa:bb", type=0x88b5) / Raw(b"\x00" * 46),
        base / IP(src="10.3.0.1", dst="10.3.0.2") / UDP(sport=11, dport=12) / Raw(b"J" * 8000),
    ]
    good = [bytes(p) for p in pkts]
    bad = [
        b"",                                    # zero length
        b"\x01\x02\x03\x04\x05\x06\x07",         # runt
        bytes(base)[:13],                       # truncated Ethernet
        bytes(base / Dot1Q(vlan=1))[:16],       # truncated VLAN tag
        bytes(base / IP(src="1.1.1.1", dst="2.2.2.2") / UDP())[:24],   # truncated IPv4
        bytes(base / IPv6() / UDP())[:40],      # truncated IPv6
    ]
    ihl3 = bytearray(bytes(base / IP(src="1.1.1.1", dst="2.2.2.2") / UDP() / Raw(b"a" * 10)))
    ihl3[14] = 0x43                              # IHL 3 (< 5)
    tot = bytearray(bytes(base / IP(src="1.1.1.1", dst="2.2.2.2") / UDP() / Raw(b"a" * 10)))
    tot[16:18] = struct.pack("!H", 1000)         # total length beyond the packet
    udp_cut = bytes(base / IP(src="1.1.1.1", dst="2.2.2.2", proto=17, ihl=5, len=22) / Raw(b"ab"))
    icmp_cut = bytes(base / IP(src="1.1.1.1", dst="2.2.2.2", proto=1, len=24) / Raw(b"\x08\x00\x00\x00"))
    bad += [bytes(ihl3), bytes(tot), udp_cut, icmp_cut]
    # Checksums (csum engine): wrong ones, none, odd lengths, a segment length that lies.
    ip = IP(src="10.4.0.1", dst="10.4.0.2")
    bad += [
        bytes(base / ip / UDP(sport=1, dport=2, chksum=0x1234) / Raw(b"c" * 21)),   # bad UDP sum
        bytes(base / ip / TCP(sport=1, dport=2, chksum=0x4321) / Raw(b"t" * 33)),   # bad TCP sum
        bytes(base / IP(src="10.4.0.3", dst="10.4.0.4", chksum=0x1111) / UDP() / Raw(b"h")),  # bad IP sum
        bytes(base / IPv6(src="2001:db8::3", dst="2001:db8::4") / UDP(sport=3, dport=4, chksum=0)
              / Raw(b"6" * 9)),                                                    # IPv6 UDP without sum
        bytes(base / ip / UDP(sport=5, dport=6, len=100) / Raw(b"l" * 10)),         # UDP length > IP's
    ]
    good += [
        bytes(base / ip / UDP(sport=7, dport=8, chksum=0) / Raw(b"n" * 15)),        # IPv4 UDP, no sum
        bytes(base / ip / UDP(sport=9, dport=10) / Raw(bytes(range(256)) * 5 + b"\x01")),  # odd, long
        bytes(base / IPv6(src="2001:db8::5", dst="2001:db8::6") / TCP(sport=5, dport=6) / Raw(b"s" * 999)),
    ]
    # Jumbo frames, summed across every segment of a chained mbuf (9002 B in 2 KiB segments:
    # five of them). One byte flipped in the first segment, on a segment boundary, in a middle
    # segment and in the last byte: each must be bad_csum, never forwarded as good.
    payload = bytes((i * 7 + 3) & 0xFF for i in range(8960))
    jumbo = bytes(base / IP(src="10.5.0.1", dst="10.5.0.2") / UDP(sport=21, dport=22) / Raw(payload))
    good += [jumbo,
             bytes(base / IP(src="10.5.0.3", dst="10.5.0.4") / TCP(sport=23, dport=24) / Raw(payload[:8947])),
             bytes(base / IP(src="10.5.0.5", dst="10.5.0.6") / UDP(sport=25, dport=26) / Raw(payload[:8959]))]
    for at in (100, 2047, 2048, 5001, len(jumbo) - 1):
        flipped = bytearray(jumbo)
        flipped[at] ^= 0x10
        bad.append(bytes(flipped))
    tcp_bad = bytearray(good[-2])
    tcp_bad[7000] ^= 0x01
    bad.append(bytes(tcp_bad))
    return good, bad


def l3(b):
    off, et = 14, struct.unpack("!H", b[12:14])[0]
    for _ in range(2):
        if et in (0x8100, 0x88A8):
            if len(b) < off + 4:
                return None, None
            et = struct.unpack("!H", b[off + 2:off + 4])[0]
            off += 4
    return off, et


def ipv4_ok(b, off):
    if len(b) < off + 20 or b[off] >> 4 != 4:
        return 0
    ihl = (b[off] & 15) * 4
    tot = struct.unpack("!H", b[off + 2:off + 4])[0]
    if ihl < 20 or len(b) < off + ihl or tot < ihl or off + tot > len(b):
        return 0
    return ihl


def swap(b, i, j, n):
    b[i:i + n], b[j:j + n] = b[j:j + n], b[i:i + n]


def model(engine, pkt, port_mac):
    """(output bytes or None, drop reason or None) for one input packet."""
    b = bytearray(pkt)
    if engine == "io":
        return bytes(b), None
    if engine == "rxonly":
        return None, "rxonly"
    if len(b) < 14:
        return None, "malformed"
    if engine == "macswap":
        swap(b, 0, 6, 6)
        return bytes(b), None
    if engine == "mac":
        b[0:6] = bytes.fromhex(PEER.replace(":", ""))
        b[6:12] = port_mac
        return bytes(b), None
    off, et = l3(b)
    if off is None:
        return None, "malformed"
    if engine == "5tswap":
        l4 = proto = None
        if et == 0x0800:
            ihl = ipv4_ok(b, off)
            if not ihl:
                return None, "malformed"
            proto = b[off + 9]
            if struct.unpack("!H", b[off + 6:off + 8])[0] & 0x1FFF == 0:
                l4 = off + ihl
        elif et == 0x86DD:
            if len(b) < off + 40:
                return None, "malformed"
            proto, l4 = b[off + 6], off + 40
        if l4 is not None and proto in (6, 17) and len(b) < l4 + 4:
            return None, "malformed"
        swap(b, 0, 6, 6)
        if et == 0x0800:
            swap(b, off + 12, off + 16, 4)
        elif et == 0x86DD:
            swap(b, off + 8, off + 24, 16)
        if l4 is not None and proto in (6, 17):
            swap(b, l4, l4 + 2, 2)
        return bytes(b), None
    if engine == "icmpecho":
        if et == 0x0806:
            if len(b) < off + 28:
                return None, "malformed"
            a = off
            if (struct.unpack("!HHBBH", b[a:a + 8]) != (1, 0x0800, 6, 4, 1)):
                return None, "not_handled"
            b[0:6] = b[6:12]
            b[6:12] = port_mac
            tip = bytes(b[a + 24:a + 28])
            b[a + 6:a + 8] = b"\x00\x02"
            b[a + 18:a + 24] = b[a + 8:a + 14]
            b[a + 24:a + 28] = b[a + 14:a + 18]
            b[a + 8:a + 14] = port_mac
            b[a + 14:a + 18] = tip
            return bytes(b), None
        if et != 0x0800:
            return None, "not_handled"
        ihl = ipv4_ok(b, off)
        if not ihl:
            return None, "malformed"
        if b[off + 9] != 1 or struct.unpack("!H", b[off + 6:off + 8])[0] & 0x1FFF:
            return None, "not_handled"
        l4 = off + ihl
        if len(b) < l4 + 8:
            return None, "malformed"
        if b[l4] != 8 or b[l4 + 1] != 0:
            return None, "not_handled"
        swap(b, 0, 6, 6)
        swap(b, off + 12, off + 16, 4)
        b[l4] = 0
        b[l4 + 2:l4 + 4] = b"\x00\x00"
        # Recompute the ICMP checksum from scratch (independent of gnio's incremental update).
        data = bytes(b[l4:off + struct.unpack("!H", b[off + 2:off + 4])[0]])
        if len(data) % 2:
            data += b"\x00"
        s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
        while s >> 16:
            s = (s & 0xFFFF) + (s >> 16)
        b[l4 + 2:l4 + 4] = struct.pack("!H", ~s & 0xFFFF)
        return bytes(b), None
    if engine == "csum":
        return model_csum(b, off, et)
    raise SystemExit("no model for engine " + engine)


def ones_sum(data):
    """16-bit one's-complement sum of big-endian words (odd length padded), folded."""
    if len(data) % 2:
        data += b"\x00"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def model_csum(b, off, et):
    if et == 0x0800:
        ihl = ipv4_ok(b, off)
        if not ihl:
            return None, "malformed"
        if ones_sum(bytes(b[off:off + ihl])) != 0xFFFF:
            return None, "bad_csum"
        if struct.unpack("!H", b[off + 6:off + 8])[0] & 0x3FFF:
            return bytes(b), None
        proto, l4 = b[off + 9], off + ihl
        seg = struct.unpack("!H", b[off + 2:off + 4])[0] - ihl
        pseudo = bytes(b[off + 12:off + 20]) + struct.pack("!BB", 0, proto)
    elif et == 0x86DD:
        if len(b) < off + 40:
            return None, "malformed"
        seg = struct.unpack("!H", b[off + 4:off + 6])[0]
        if off + 40 + seg > len(b):
            return None, "malformed"
        proto, l4 = b[off + 6], off + 40
        pseudo = bytes(b[off + 8:off + 40]) + struct.pack("!BB", 0, proto)
    else:
        return bytes(b), None
    if proto not in (6, 17):
        return bytes(b), None
    if proto == 17:
        if seg < 8 or len(b) < l4 + 8:
            return None, "malformed"
        if struct.unpack("!H", b[l4 + 6:l4 + 8])[0] == 0:
            return (bytes(b), None) if et == 0x0800 else (None, "bad_csum")
        ulen = struct.unpack("!H", b[l4 + 4:l4 + 6])[0]
        if ulen < 8 or ulen > seg:
            return None, "malformed"
        seg = ulen
    elif seg < 20 or len(b) < l4 + 20:
        return None, "malformed"
    total = ones_sum(pseudo + struct.pack("!H", seg)) + ones_sum(bytes(b[l4:l4 + seg]))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return (bytes(b), None) if total == 0xFFFF else (None, "bad_csum")


def txonly_expected(n, size, port_mac):
    p = (Ether(dst=PEER, src=":".join("%02x" % x for x in port_mac)) /
         IP(src="198.18.0.1", dst="198.18.0.2", ttl=64, id=0, flags=0) / UDP(sport=9, dport=9, chksum=0))
    p = p / Raw(b"\x00" * (size - len(p)))
    return [bytes(p)] * n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("engine")
    ap.add_argument("--consumer", default="host")
    ap.add_argument("--gpu", default="host")
    ap.add_argument("--mem", default=None)
    ap.add_argument("--chained", action="store_true",
                    help="default mbuf size: the jumbo frame arrives as a chained mbuf")
    ap.add_argument("--inline-bytes", type=int, default=0,
                    help="through the latency queue: the first N bytes in flagged lines")
    ap.add_argument("--mbuf-size", type=int, default=0,
                    help="with --chained: this data room (1152: a jumbo frame in nine segments, more "
                    "than a flagged-line slot's table holds)")
    args = ap.parse_args()
    ck = Checker("engine-%s-%s%s%s%s" % (args.engine, args.consumer, "-chained" if args.chained else "",
                                        "-lines%d" % args.inline_bytes if args.inline_bytes else "",
                                        "-mbuf%d" % args.mbuf_size if args.mbuf_size else ""))
    good, bad = corpus()
    inputs = good + bad
    tmp = tempfile.mkdtemp(prefix="gnio-pcap-")
    inp, out, js = (os.path.join(tmp, f) for f in ("in.pcap", "out.pcap", "out.json"))
    app = ["--forward-mode=" + args.engine, "--gpu=" + args.gpu, "--consumer=" + args.consumer,
           "--json=" + js, "--burst=8"] + ([] if args.chained else ["--mbuf-size=10240"]) + \
        (["--mbuf-size=%d" % args.mbuf_size] if args.chained and args.mbuf_size else [])
    if args.mem:
        app.append("--mem=" + args.mem)
    if args.inline_bytes:
        app.append("--inline-bytes=%d" % args.inline_bytes)
    if args.engine == "txonly":
        n = 40
        vdev = "net_pcap0,tx_pcap=" + out
        app += ["--max-packets=%d" % n, "--txpkts=100"]
    else:
        wrpcap(inp, [Raw(p) for p in inputs], linktype=1)
        vdev = "net_pcap0,rx_pcap=%s,tx_pcap=%s" % (inp, out)
        app += ["--max-packets=%d" % len(inputs)]
    run_testpmd(["--vdev=" + vdev], app)
    summary = load_json(js)
    port_mac = bytes.fromhex(summary["ports"][0]["mac"].replace(":", ""))
    # Raw records: re-serialising a parsed empty packet would invent a header.
    got = [data for data, _ in RawPcapReader(out)] if os.path.getsize(out) > 24 else []
    drops = {}
    if args.engine == "txonly":
        expected = txonly_expected(n, 100, port_mac)
    else:
        expected = []
        for p in inputs:
            o, why = model(args.engine, p, port_mac)
            if o is None:
                drops[why] = drops.get(why, 0) + 1
            else:
                expected.append(o)
    ck.check(len(got) == len(expected), "%d packets out, expected %d" % (len(got), len(expected)))
    for i, (g, e) in enumerate(zip(got, expected)):
        ck.check(g == e, "packet %d differs:\n got %s\n want %s" % (i, g.hex(), e.hex()))
    for reason, count in summary["total"]["drops"].items():
        ck.check(count == drops.get(reason, 0), "drop %s: %d, expected %d" % (reason, count, drops.get(reason, 0)))
    ck.check(summary["conserved"], "conservation")
    ck.check(summary["pools_full"], "mempool back to its starting level")
    ck.check(summary["processed"] == len(inputs) if args.engine != "txonly" else summary["processed"] == n,
             "processed %d" % summary["processed"])
    ck.finish()


if __name__ == "__main__":
    main()
