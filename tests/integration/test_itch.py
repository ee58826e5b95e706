# SPDX-License-Identifier: BSD-3-Clause
"""gnio-itch on the CPU path (host consumer), fed by net_pcap with gnio-itchgen's pcaps: the
BBO events byte for byte and the final book (and its counts) equal to the reference's, for a
plain feed and for one with duplicates, reordered packets and heartbeats; each gap (a
reordered packet) asked for once with a well-formed MoldUDP64 re-request to --rerequest,
sent back out of the feed's port (the tx pcap); --udp-port filters; every packet accounted
for, pools full; bad options exit 2 with one line.
--consumer cuda-kernel: the same on the GPU path (its own kernel and book in GPU memory, a batch
of messages applied at a time by blocks of threads), bit for bit the same files; exits 77 where
there is no CUDA GPU. --lines: the low-latency path (each packet in flagged lines, the CPU path's
book in 31 shards applied a shard a lane: by a warp on the GPU with cuda-kernel, by the same steps
on the worker lcore with host), the same files again, and an add that could be refused (tables too
small) sending a packet's messages through one lane. Feeds made here (issue 54): reference 0,
sides other than B and S, bad checksums, stray sequence numbers, frames of another session, cut
short or VLAN-tagged (gnio-itch-replay agreeing with gnio-itch), a message of no bytes, a gap at
the feed's end and SIGINT with a gap open (exit 3); a stray first packet far ahead, counts that are
not the messages there, IPv4 lengths out of the frame and fragments (malformed), a re-request's
frame at its own length; drops by reason, exit statuses, and gnio-itch-replay's command line and
pcap formats. GNIO_ITCH_WRAP: a command put before gnio-itch
(compute-sanitizer ...)."""
import argparse
import json
import os
import re
import signal
import struct
import subprocess
import time
import sys
import tempfile

from scapy.all import IP, UDP, Ether, Raw, RawPcapReader, wrpcap

from gnio_run import BUILD, Checker, eal_mem
from udp_frames import udp_frames

SRC = os.environ.get("GNIO_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))
GEN = os.path.join(SRC, "apps", "gnio-itch", "gnio-itchgen")
ITCH = os.path.join(BUILD, "apps", "gnio-itch", "gnio-itch")


def gen(d, name, *args):
    f = {k: os.path.join(d, name + ext) for k, ext in (("pcap", ".pcap"), ("book", ".json"), ("bbo", ".csv"))}
    subprocess.run([sys.executable, GEN, "--seed", "11", "--messages", "40000", "--stocks", "80", "--depth",
                    "100000", "--pcap", f["pcap"], "--book-json", f["book"], "--bbo-csv", f["bbo"]] + list(args),
                   check=True, capture_output=True, timeout=300)
    return f


CONSUMER = ["--consumer", "host"]


RUNS = []   # (name, stdout) of every gnio-itch run


def itch_cmd(d, name, pcap, *args, wrap=True, events_tx=False, consumer=None):
    """gnio-itch's command line for a run on @pcap, and where its outputs go."""
    out = {k: os.path.join(d, name + "-itch" + ext) for k, ext in (("tx", ".pcap"), ("book", ".json"),
                                                                    ("bbo", ".csv"), ("events", "-events.pcap"))}
    # events_tx: a second TX queue (a second tx_pcap), the application's own (--events-udp).
    vdev = "--vdev=net_pcap0,rx_pcap=%s,tx_pcap=%s" % (pcap, out["tx"]) + \
        (",tx_pcap=%s" % out["events"] if events_tx else "")
    wrapper = os.environ.get("GNIO_ITCH_WRAP", "").split() if wrap else []
    # (Under a wrapper, a sanitizer, an item waits for the GPU many times longer than the watchdog's 1 s,
    # and a reordered packet can come later than the gap timeout: both made long there.)
    cmd = wrapper + [ITCH, "-l", "0-1"] + eal_mem() + \
        os.environ.get("GNIO_EAL_EXTRA", "").split() + [vdev, "--"] + (consumer or CONSUMER) + \
        ["--exit-at-end", "--duration", "60", "--depth", "100000", "--bbo-csv", out["bbo"],
         "--book-json", out["book"]] + (["--stall-ms", "100000", "--gap-timeout-ms", "100000"] if wrapper else []) + list(args)
    return cmd, out


def itch(d, name, pcap, *args, wrap=True, events_tx=False, consumer=None):
    cmd, out = itch_cmd(d, name, pcap, *args, wrap=wrap, events_tx=events_tx, consumer=consumer)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    RUNS.append((name, r.stdout))
    return r, out


def itch_sigint(d, name, pcap, *args, after=3.0):
    """gnio-itch on @pcap, stopped by SIGINT @after seconds once it has started (its first line)."""
    cmd, out = itch_cmd(d, name, pcap, *args, wrap=False)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = p.stdout.readline()
    time.sleep(after)
    p.send_signal(signal.SIGINT)
    try:
        rest, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        rest, err = p.communicate()
    r = subprocess.CompletedProcess(cmd, p.returncode, first + rest, err)
    RUNS.append((name, r.stdout))
    return r, out


def ref_book(got, want):
    """Is book file @got gnio-itchgen's @want: every key the reference writes (gnio-itch's own counts after)?"""
    return all(got.get(k) == v for k, v in want.items())


def first_diff(fa, fb):
    """Where two files first differ: line number and both lines (for a failed check's message)."""
    a, b = open(fa).read().splitlines(), open(fb).read().splitlines()
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return "line %d: %s | %s" % (i + 1, x, y)
    return "lengths %d, %d lines" % (len(a), len(b)) if len(a) != len(b) else "none"


def requests(pcap):
    """The re-requests gnio-itch sent: (ok, session, (seq, count)), each frame checked."""
    out = []
    if os.path.getsize(pcap) <= 24:
        return out
    for data, _ in RawPcapReader(pcap):
        p = Ether(data)
        ip, udp = p[IP], p[UDP]
        good = ip.chksum
        del ip.chksum
        # (The frame is its headers and the request: the feed packet's bytes after them trimmed.)
        ok = Ether(bytes(p))[IP].chksum == good and ip.len == 48 and udp.len == 28 and len(data) == 14 + ip.len and \
            ip.dst == "10.9.8.7" and udp.dport == 4242 and ip.src == "10.0.0.2" and udp.sport == 26402
        pl = bytes(udp.payload)[:20]
        out.append((ok, pl[:10], struct.unpack(">QH", pl[10:20])))
    return out


def events_sent(pcap):
    """The BBO events gnio-itch sent as UDP (itch_send.h), as the CSV's lines, whether every
    datagram was well formed (to 10.7.7.7:26500 from --local, checksums, lengths, indices in order),
    and each event's RX time (ns, CLOCK_REALTIME)."""
    lines, ok, index, rx = [], True, 0, []
    if os.path.getsize(pcap) <= 24:
        return lines, False
    for p, ip, udp, sums in udp_frames(pcap):
        pl = bytes(udp.payload)
        first, count = struct.unpack(">QH", pl[:10])
        ok &= sums and ip.dst == "10.7.7.7" and \
            udp.dport == 26500 and ip.src == "10.0.0.2" and udp.sport == 26402 and p.dst == "ff:ff:ff:ff:ff:ff" and \
            first == index and 0 < count <= 24 and len(pl) == 12 + 56 * count and udp.len == 8 + len(pl)
        for k in range(count):
            seq, loc, _, _, ts, bpx, bsh, apx, ash, rx_ns = struct.unpack(">QHHIQIQIQQ", pl[12 + 56 * k:68 + 56 * k])
            lines.append("%d,%d,%d,%d,%d,%d,%d\n" % (seq, loc, ts, bpx, bsh, apx, ash))
            rx.append(rx_ns)
        index += count
    return lines, ok, rx


# Feeds made here, message by message, for what gnio-itchgen does not make.
SESSION = b"GNIO000001"


def m_dir(loc, name, ts):
    """A Stock Directory (R) naming stock @loc."""
    return b"R" + struct.pack(">HH", loc, 0) + ts.to_bytes(6, "big") + name.ljust(8) + bytes(20)


def m_add(loc, ref, side, shares, price, ts):
    """An Add Order (A)."""
    return b"A" + struct.pack(">HH", loc, 0) + ts.to_bytes(6, "big") + struct.pack(">QcI", ref, side, shares) + \
        b"TEST    " + struct.pack(">I", price)


def m_exec(loc, ref, shares, ts):
    """An Order Executed (E)."""
    return b"E" + struct.pack(">HH", loc, 0) + ts.to_bytes(6, "big") + struct.pack(">QIQ", ref, shares, 1)


def m_replace(loc, ref, new, shares, price, ts):
    """An Order Replace (U)."""
    return b"U" + struct.pack(">HH", loc, 0) + ts.to_bytes(6, "big") + struct.pack(">QQII", ref, new, shares, price)


def m_del(loc, ref, ts):
    """An Order Delete (D)."""
    return b"D" + struct.pack(">HH", loc, 0) + ts.to_bytes(6, "big") + struct.pack(">Q", ref)


def mold(seq, msgs, count=None, session=SESSION):
    """A MoldUDP64 packet of @msgs from @seq (@count: what its header says, the messages' number if None)."""
    body = b"".join(struct.pack(">H", len(m)) + m for m in msgs)
    return session + struct.pack(">QH", seq, len(msgs) if count is None else count) + body


def frame(payload, dport=26400):
    """@payload in a UDP/IPv4 frame to the feed's port (checksums right)."""
    return Ether(src="02:00:00:00:00:01", dst="01:00:5e:36:0c:01") / IP(src="10.0.0.1", dst="233.54.12.1") / \
        UDP(sport=26401, dport=dport) / Raw(payload)


def write_feed(d, name, frames):
    """The frames (scapy packets or bytes) as a pcap in @d."""
    path = os.path.join(d, name + ".pcap")
    wrpcap(path, [f if not isinstance(f, bytes) else Ether(f) for f in frames])
    return path


def ref_zero(d, ck):
    """Issue 54 item 3: an Add of order reference 0 was refused silently (0 marked a free slot). Here
    reference 0 is an order like any other (added, executed, replaced by itself, deleted) on every path;
    every message that changes nothing is counted under its reason: an add of a reference live in its
    stock (refused), an add of no shares (malformed)."""
    msgs = [m_dir(1, b"ZERO", 1000),
            m_add(1, 0, b"B", 100, 10000, 2000),      # 2: the best bid, 10000 x 100
            m_add(1, 5, b"B", 200, 9900, 3000),       # 3: not the best
            m_add(1, 0, b"S", 50, 10100, 4000),       # 4: reference 0 is live: refused
            m_exec(1, 0, 30, 5000),                   # 5: 10000 x 70
            m_replace(1, 0, 0, 300, 9950, 6000),      # 6: replaced by itself: 9950 x 300
            m_del(1, 0, 7000),                        # 7: 9900 x 200
            m_add(1, 7, b"B", 0, 9999, 8000),         # 8: no shares: malformed
            m_add(2, 5, b"S", 100, 5000, 9000)]       # 9: reference 5 of another stock
    pcap = write_feed(d, "ref0", [frame(mold(1, msgs[:3])), frame(mold(4, msgs[3:6])), frame(mold(7, msgs[6:])),
                                  frame(mold(10, [], count=0xFFFF))])
    want_bbo = "2,1,2000,10000,100,0,0\n5,1,5000,10000,70,0,0\n6,1,6000,9950,300,0,0\n7,1,7000,9900,200,0,0\n" \
        "9,2,9000,0,0,5000,100\n"
    r, out = itch(d, "ref0", pcap)
    got = json.load(open(out["book"])) if r.returncode == 0 else {}
    bbo = open(out["bbo"]).read() if r.returncode == 0 else ""
    stocks = {s["locate"]: s for s in got.get("stocks", [])}
    ck.check(r.returncode == 0 and bbo == want_bbo, "reference 0: added, executed, replaced and deleted like any "
             "other (exit %d, events %r)" % (r.returncode, bbo))
    ck.check(stocks.get(1, {}).get("bids") == [[9900, 200, 1]] and stocks.get(1, {}).get("orders") == 1 and
             stocks.get(2, {}).get("asks") == [[5000, 100, 1]] and stocks.get(1, {}).get("stock") == "ZERO",
             "reference 0: the final book (%s)" % stocks)
    ck.check(got.get("messages") == 8 and got.get("refused") == 1 and got.get("malformed") == 1 and
             got.get("unknown_ref") == 0 and got.get("lost") == 0,
             "every message that changes nothing counted: an add of a live reference refused, one of no shares "
             "malformed (%s)" % {k: got.get(k) for k in ("messages", "refused", "malformed", "unknown_ref")})


def side_x(d, ck):
    """Issue 54 item 4: an Add whose side is neither 'B' nor 'S' was booked as a bid. Malformed: counted,
    the book left alone (every path)."""
    msgs = [m_add(3, 1, b"X", 100, 500, 1000),      # 1: side X: malformed
            m_add(3, 2, b"B", 100, 400, 2000),      # 2: the best bid, 400 x 100
            m_add(3, 3, b"b", 100, 600, 3000),      # 3: side b: malformed
            m_add(3, 4, b"S", 100, 700, 4000)]      # 4: the best ask, 700 x 100
    pcap = write_feed(d, "side", [frame(mold(1, msgs)), frame(mold(5, [], count=0xFFFF))])
    r, out = itch(d, "side", pcap)
    got = json.load(open(out["book"])) if r.returncode == 0 else {}
    bbo = open(out["bbo"]).read() if r.returncode == 0 else ""
    stocks = {s["locate"]: s for s in got.get("stocks", [])}
    ck.check(r.returncode == 0 and bbo == "2,3,2000,400,100,0,0\n4,3,4000,400,100,700,100\n" and
             stocks.get(3, {}).get("bids") == [[400, 100, 1]] and stocks.get(3, {}).get("asks") == [[700, 100, 1]] and
             got.get("malformed") == 2 and got.get("messages") == 2,
             "an add of side X or b: malformed, the book left alone (exit %d, events %r, %s, %s)" % (
                 r.returncode, bbo, stocks.get(3), {k: got.get(k) for k in ("messages", "malformed")}))


def bad_sums(d, ck):
    """Issue 54 item 2: checksums were never verified: an Add with one price bit flipped went into the book
    and the BBO file. A copy of each packet with a bad UDP checksum (a price bit flipped) or a bad IPv4
    header checksum comes before it: dropped (bad_csum), the real one applied; a packet without a UDP
    checksum (0) is taken (every path)."""
    p1 = bytes(frame(mold(1, [m_add(4, 1, b"B", 100, 1000000, 1000)])))
    p2 = bytes(frame(mold(2, [m_add(4, 2, b"S", 100, 1000100, 2000)])))
    p3 = Ether(src="02:00:00:00:00:01", dst="01:00:5e:36:0c:01") / IP(src="10.0.0.1", dst="233.54.12.1") / \
        UDP(sport=26401, dport=26400, chksum=0) / Raw(mold(3, [m_add(4, 3, b"B", 50, 1000050, 3000)]))
    flip = bytearray(p1)
    flip[42 + 20 + 2 + 35] ^= 1            # the price's last byte: 1000001, the UDP checksum now wrong
    ttl = bytearray(p2)
    ttl[22] ^= 0x10                        # the TTL: the IPv4 header checksum now wrong (the UDP one holds)
    pcap = write_feed(d, "sums", [bytes(flip), p1, bytes(ttl), p2, p3, frame(mold(4, [], count=0xFFFF))])
    r, out = itch(d, "sums", pcap)
    got = json.load(open(out["book"])) if r.returncode == 0 else {}
    bbo = open(out["bbo"]).read() if r.returncode == 0 else ""
    ck.check(r.returncode == 0 and bbo == "1,4,1000,1000000,100,0,0\n2,4,2000,1000000,100,1000100,100\n"
             "3,4,3000,1000050,50,1000100,100\n" and got.get("duplicates") == 0 and got.get("messages") == 3,
             "bad checksums dropped before the receiver, the real packets applied, no UDP checksum taken "
             "(exit %d, events %r, %s)" % (r.returncode, bbo, {k: got.get(k) for k in ("messages", "duplicates")}))
    ck.check(" bad_csum 2" in r.stdout and got.get("drops", {}).get("bad_csum") == 2,
             "bad checksums counted as their own reason, in the summary and the book file: %s %s" % (
                 [l for l in r.stdout.splitlines() if "by reason" in l], got.get("drops")))


def inject(d, name, pcap, after, frames):
    """@pcap with @frames put after its packet number @after: a new pcap in @d."""
    pk = [data for data, _ in RawPcapReader(pcap)]
    return write_feed(d, name, pk[:after] + [bytes(f) for f in frames] + pk[after:])


def stray(d, ck):
    """Issue 54 item 6: one stray packet of sequence 2^63 (or a heartbeat at 2^62) made gnio-itch count
    2^63 messages lost and every later real packet a duplicate. Such packets (and one further ahead than
    --max-gap, test_itch_feed) are implausible: counted, not obeyed; the feed's events and book are the
    reference's."""
    ref = gen(d, "stray")
    want = json.load(open(ref["book"]))
    stray_add = [m_add(1, 77, b"B", 100, 999999, 1)]
    pcap = inject(d, "stray", ref["pcap"], 100, [frame(mold(1 << 63, stray_add)),
                                                 frame(mold(1 << 62, [], count=0)),
                                                 frame(mold((1 << 64) - 2, stray_add * 3))])
    r, out = itch(d, "stray", pcap)
    got = json.load(open(out["book"])) if r.returncode == 0 else {}
    print("\n".join(l for l in r.stdout.splitlines() if " packets (" in l))
    ck.check(r.returncode == 0 and open(out["bbo"]).read() == open(ref["bbo"]).read() and
             ref_book(got, dict(want, packets=want["packets"] + 3)) and got.get("implausible") == 3,
             "stray packets (2^63, a heartbeat at 2^62, past 2^64 - 1): implausible, not obeyed, the reference's "
             "events and book (exit %d, %s)" % (r.returncode, {k: (want.get(k), got.get(k)) for k in (
                 "packets", "messages", "lost", "duplicates", "gaps", "implausible")}))


def stray_first(d, ck):
    """A stray packet of the session at sequence 10^12 before a feed that starts at 1 took the session:
    the receiver joined there and counted every real packet a duplicate (--max-gap skipped the first
    packet). A session starts at message 1: a first packet further than --max-gap past it is implausible,
    not joined; one as far as --max-gap is joined there."""
    msgs = [m_add(8, 1 + i, b"B", 100, 1000 + i, 1 + i) for i in range(4)]
    bbo = "".join("%d,8,%d,%d,100,0,0\n" % (1 + i, 1 + i, 1000 + i) for i in range(4))
    pcap = write_feed(d, "stray-first", [frame(mold(10 ** 12, [m_add(8, 99, b"B", 100, 999999, 1)])),
                                         frame(mold(1, msgs[:2])), frame(mold(3, msgs[2:])),
                                         frame(mold(5, [], count=0xFFFF))])
    r, out = itch(d, "stray-first", pcap)
    got = json.load(open(out["book"])) if r.returncode == 0 else {}
    ck.check(r.returncode == 0 and open(out["bbo"]).read() == bbo and got.get("implausible") == 1 and
             got.get("messages") == 4 and got.get("duplicates") == 0 and got.get("next_seq") == 5,
             "a stray first packet at 10^12: implausible, the feed from 1 applied (exit %d, %s)" % (
                 r.returncode, {k: got.get(k) for k in ("implausible", "messages", "duplicates", "next_seq")}))
    # --max-gap 100: a first packet at 102 is implausible, one at 101 joins the session there.
    pcap = write_feed(d, "late-join", [frame(mold(102, msgs[:1])), frame(mold(101, msgs[1:])),
                                       frame(mold(104, [], count=0xFFFF))])
    r, out = itch(d, "late-join", pcap, "--max-gap", "100")
    got = json.load(open(out["book"])) if r.returncode == 0 else {}
    ck.check(r.returncode == 0 and got.get("implausible") == 1 and got.get("messages") == 3 and
             got.get("next_seq") == 104 and got.get("lost") == 0,
             "--max-gap 100: a first packet at 102 implausible, one at 101 joined (exit %d, %s)" % (
                 r.returncode, {k: got.get(k) for k in ("implausible", "messages", "next_seq", "lost")}))


def count_lie(d, ck):
    """A packet whose count overstated its messages (0xfffe, two there) was trusted: its messages applied
    and the rest taken as a gap, one re-request a later packet, the gap counted lost, exit 3. A packet
    whose count is not the messages it holds (more, fewer, bytes after them; a heartbeat with a
    message) is malformed: counted, dropped whole, the next sequence number unmoved."""
    msgs = [m_add(9, 1 + i, b"B", 100, 2000 + i, 1 + i) for i in range(6)]
    bogus = [m_add(9, 50 + i, b"S", 100, 9000 + i, 1) for i in range(2)]
    bbo = "".join("%d,9,%d,%d,100,0,0\n" % (1 + i, 1 + i, 2000 + i) for i in range(6))
    pcap = write_feed(d, "count-lie", [frame(mold(1, msgs[:2])),
                                       frame(mold(3, bogus, count=0xFFFE)),      # overstated
                                       frame(mold(3, bogus, count=1)),           # understated
                                       frame(mold(3, bogus[:1]) + struct.pack(">H", 3) + b"ABC"),
                                       frame(mold(3, bogus, count=0)),           # a heartbeat with messages
                                       frame(mold(3, msgs[2:4])), frame(mold(5, msgs[4:])),
                                       frame(mold(7, [], count=0xFFFF))])
    r, out = itch(d, "count-lie", pcap, "--rerequest", "10.9.8.7:4242")
    got = json.load(open(out["book"])) if r.returncode == 0 else {}
    ck.check(r.returncode == 0 and open(out["bbo"]).read() == bbo and got.get("malformed") == 4 and
             got.get("messages") == 6 and got.get("lost") == 0 and got.get("gaps") == 0 and
             not requests(out["tx"]) and got.get("drops", {}).get("malformed") == 4,
             "a count that is not the messages there: malformed, dropped, the feed applied, nothing asked "
             "for (exit %d, %s, %d re-requests)" % (r.returncode, {k: got.get(k) for k in (
                 "malformed", "messages", "lost", "gaps", "drops")}, len(requests(out["tx"]))))


def ip_checks(d, ck):
    """An IPv4 total length past the frame, or shorter than the UDP datagram, was not checked (such a
    packet was taken), and a fragment (MF set, or an offset) was taken as a whole datagram. Each is
    malformed: counted, dropped, its messages not applied (every path)."""
    msgs = [m_add(10, 1 + i, b"B", 100, 3000 + i, 1 + i) for i in range(4)]
    bbo = "".join("%d,10,%d,%d,100,0,0\n" % (1 + i, 1 + i, 3000 + i) for i in range(4))
    bogus = mold(3, [m_add(10, 70, b"S", 100, 9000, 1), m_add(10, 71, b"S", 100, 9001, 1)])

    def ip_frame(ip_len=None, **ip):
        """The bogus packet, its IPv4 header changed (the UDP checksum over the datagram as it is, the
        IPv4 header's right)."""
        b = bytearray(bytes(Ether(src="02:00:00:00:00:01", dst="01:00:5e:36:0c:01") /
                            IP(src="10.0.0.1", dst="233.54.12.1", **ip) / UDP(sport=26401, dport=26400) / Raw(bogus)))
        if ip_len is not None:
            struct.pack_into(">H", b, 16, ip_len)
            struct.pack_into(">H", b, 24, 0)
            struct.pack_into(">H", b, 24, 0xffff - sum(struct.unpack(">10H", bytes(b[14:34]))) % 0xffff)
        return bytes(b)

    whole = 20 + 8 + len(bogus)
    bad = [ip_frame(ip_len=whole + 100), ip_frame(ip_len=whole - 10), ip_frame(flags="MF"), ip_frame(frag=8)]
    pcap = write_feed(d, "ip-checks", [frame(mold(1, msgs[:2]))] + bad +
                      [frame(mold(3, msgs[2:])), frame(mold(5, [], count=0xFFFF))])
    r, out = itch(d, "ip-checks", pcap)
    got = json.load(open(out["book"])) if r.returncode == 0 else {}
    ck.check(r.returncode == 0 and open(out["bbo"]).read() == bbo and got.get("messages") == 4 and
             got.get("drops", {}).get("malformed") == 4 and got.get("duplicates") == 0,
             "an IPv4 length past the frame or short of the datagram, a fragment: malformed, dropped (exit %d, "
             "%s)" % (r.returncode, {k: got.get(k) for k in ("messages", "duplicates", "drops")}))


def request_frame(d, ck):
    """A re-request was written over the feed packet that showed the gap and sent at that packet's
    length (687 bytes, its IPv4 length 48). It is sent as its headers and the request only: the frame
    is its IPv4 length and the Ethernet header (requests())."""
    msgs = [m_add(11, 1 + i, b"B", 100, 4000 + i, 1 + i) for i in range(30)]
    pcap = write_feed(d, "req-frame", [frame(mold(1, msgs[:2])), frame(mold(13, msgs[12:])),
                                       frame(mold(3, msgs[2:12])), frame(mold(31, [], count=0xFFFF))])
    r, out = itch(d, "req-frame", pcap, "--rerequest", "10.9.8.7:4242")
    got = json.load(open(out["book"])) if r.returncode == 0 else {}
    reqs = requests(out["tx"])
    sizes = [len(data) for data, _ in RawPcapReader(out["tx"])] if os.path.getsize(out["tx"]) > 24 else []
    ck.check(r.returncode == 0 and got.get("messages") == 30 and got.get("gaps") == 1 and
             [(ok, s, q) for ok, s, q in reqs] == [(True, SESSION, (3, 10))],
             "a re-request: its headers and the request, 62 bytes (exit %d, %s, frames of %s bytes)" % (
                 r.returncode, reqs, sizes))


REPLAY = os.path.join(BUILD, "apps", "gnio-itch", "gnio-itch-replay")


def replay(d, name, pcap, *args):
    """gnio-itch-replay on @pcap: (process, its BBO file's text, its book)."""
    bbo, js = os.path.join(d, name + "-r.csv"), os.path.join(d, name + "-r.json")
    r = subprocess.run([REPLAY, pcap, "--depth", "100000", "--bbo-csv", bbo, "--book-json", js] + list(args),
                       capture_output=True, text=True, timeout=300)
    ok = r.returncode in (0, 3)
    return r, open(bbo).read() if ok else "", json.load(open(js)) if ok else {}


def replay_agrees(d, ck):
    """Issue 54 item 5: gnio-itch-replay disagreed with gnio-itch on the same pcap: it applied a packet of
    another MoldUDP64 session (then counted the real one a duplicate), read messages past the UDP length
    (up to the IP length) and skipped VLAN-tagged frames silently. It runs gnio-itch's own receiver
    (itch_state.h, itch_feed.h): on a feed with such frames put before the real ones, both give the
    reference's events and book, the same counts, and the replay counts the VLAN frame as not handled."""
    ref = gen(d, "agree")
    want = json.load(open(ref["book"]))
    pk = [data for data, _ in RawPcapReader(ref["pcap"])]
    k = next(i for i in range(50, len(pk)) if struct.unpack(">H", pk[i][42 + 18:42 + 20])[0] >= 2)
    real = pk[k]
    seq = struct.unpack(">Q", real[42 + 10:42 + 18])[0]
    first = real[42 + 20:42 + 22 + struct.unpack(">H", real[42 + 20:42 + 22])[0]]   # its first message, length and all
    bogus = m_add(1, 999, b"B", 100, 777777, 1)
    # Another session's packet at the next sequence number: an add the feed never made.
    other = frame(mold(seq, [bogus], session=b"OTHER00001"))
    # The real packet's header and first message in the UDP datagram; after it, inside the IPv4 packet's
    # length only, the add the feed never made as its second message.
    short = bytearray(bytes(frame(real[42:42 + 20] + first)))
    tail = struct.pack(">H", len(bogus)) + bogus
    short += tail
    struct.pack_into(">H", short, 16, struct.unpack(">H", short[16:18])[0] + len(tail))
    short[24:26] = b"\0\0"
    struct.pack_into(">H", short, 24, 0xffff - (sum(struct.unpack(">10H", bytes(short[14:34]))) % 0xffff))
    # A VLAN-tagged copy of the real packet, its first message the add the feed never made.
    vlan = bytearray(real[:12] + b"\x81\x00\x00\x05" + real[12:])
    pcap = inject(d, "agree", ref["pcap"], k, [other, bytes(short), bytes(vlan)])
    r1, out = itch(d, "agree", pcap)
    b1 = json.load(open(out["book"])) if r1.returncode == 0 else {}
    r2, bbo2, b2 = replay(d, "agree", pcap)
    print(r2.stdout.strip())
    same = {k: (b1.get(k), b2.get(k)) for k in b2 if k != "stocks" and b1.get(k) != b2.get(k)}
    ck.check(r1.returncode == 0 and r2.returncode == 0 and open(out["bbo"]).read() == bbo2 ==
             open(ref["bbo"]).read() and all(b1.get(k) == v for k, v in b2.items()),
             "gnio-itch-replay and gnio-itch on frames of another session, past the UDP length, VLAN-tagged: the "
             "reference's events, the same book and counts (exit %d, %d; differ: %s)" % (
                 r1.returncode, r2.returncode, same))
    # (The datagram cut short holds fewer messages than its count: malformed, dropped whole, not a packet.)
    ck.check(ref_book(b2, dict(want, packets=want["packets"] + 1)) and " other sessions 1," in r2.stdout and
             " malformed 1," in r2.stdout and "not_handled 1" in r2.stdout,
             "gnio-itch-replay: the other session's packet, the datagram cut short and the VLAN frame counted, "
             "the reference's book (%s)" % {k: (want.get(k), b2.get(k)) for k in want if k != "stocks" and
                                            want.get(k) != b2.get(k)})


def vlan(d, ck):
    """Issue 54 item 11: gnio-itch never printed its drops by reason: a VLAN-tagged feed said "received 5 =
    transmitted 0 + dropped 5" and no reason. Each reason is printed (and in the book file)."""
    frames = [bytes(frame(mold(1 + i, [m_add(5, 1 + i, b"B", 100, 1000 + i, 1)]))) for i in range(5)]
    pcap = write_feed(d, "vlan", [f[:12] + b"\x81\x00\x00\x07" + f[12:] for f in frames])
    r, out = itch(d, "vlan", pcap, "--duration", "3")
    got = json.load(open(out["book"])) if r.returncode == 0 else {}
    ck.check(r.returncode == 0 and "dropped by reason: not_handled 5\n" in r.stdout and
             got.get("drops", {}).get("not_handled") == 5 and got.get("messages") == 0,
             "a VLAN-tagged feed: its 5 packets dropped as not handled, said so (exit %d: %s)" % (
                 r.returncode, [l for l in r.stdout.splitlines() if "dropped" in l]))


def drops_add_up(ck):
    """Every run's drops by reason add up to what it dropped (queue-full drops and every other reason shown)."""
    bad = []
    for name, out in RUNS:
        total = re.search(r"received \d+ = transmitted \d+ \+ dropped (\d+)", out)
        why = re.search(r"dropped by reason:(.*)", out)
        if total is None:
            continue
        shown = sum(int(n) for n in re.findall(r" [a-z_]+ (\d+)", why.group(1))) if why else -1
        if shown != int(total.group(1)):
            bad.append((name, total.group(0), why.group(0) if why else None))
    ck.check(not bad, "every run's drops by reason add up to its drops: %s" % bad[:3])


def empty_message(d, ck):
    """Issue 54 item 12: a message of no bytes was counted an unknown type; it is malformed (an unknown
    type byte stays unknown_type)."""
    msgs = [b"", b"Z" + bytes(11), m_add(6, 1, b"B", 100, 1000, 1)]
    pcap = write_feed(d, "empty", [frame(mold(1, msgs)), frame(mold(4, [], count=0xFFFF))])
    r, out = itch(d, "empty", pcap)
    got = json.load(open(out["book"])) if r.returncode == 0 else {}
    ck.check(r.returncode == 0 and got.get("malformed") == 1 and got.get("unknown_type") == 1 and
             got.get("messages") == 1 and open(out["bbo"]).read() == "3,6,1,1000,100,0,0\n",
             "a message of no bytes: malformed, an unknown type: unknown_type (exit %d, %s)" % (
                 r.returncode, {k: got.get(k) for k in ("messages", "malformed", "unknown_type")}))


def pcap_variant(src, dst, ns=False, big=False):
    """@src (a little-endian microsecond pcap) rewritten as another pcap format of the same frames."""
    data, out, at = open(src, "rb").read(), bytearray(), 24
    e = ">" if big else "<"
    _, major, minor, zone, sig, snap, link = struct.unpack("<IHHiIII", data[:24])
    out += struct.pack(e + "IHHiIII", 0xa1b23c4d if ns else 0xa1b2c3d4, major, minor, zone, sig, snap, link)
    while at < len(data):
        sec, frac, incl, orig = struct.unpack("<IIII", data[at:at + 16])
        out += struct.pack(e + "IIII", sec, frac * 1000 if ns else frac, incl, orig) + data[at + 16:at + 16 + incl]
        at += 16 + incl
    open(dst, "wb").write(out)


def replay_cli(d, ck):
    """Issue 54 item 14 (gnio-itch-replay): --help said "a value is missing", a nanosecond pcap (which
    gnio-itch reads) was refused. --help prints the usage (exit 0); a bad option is one line, exit 2;
    nanosecond and big-endian pcaps give the same files as the microsecond one."""
    r = subprocess.run([REPLAY, "--help"], capture_output=True, text=True)
    ck.check(r.returncode == 0 and r.stdout.startswith("usage: gnio-itch-replay PCAP") and r.stderr == "",
             "gnio-itch-replay --help: the usage, exit 0 (exit %d: %r)" % (r.returncode, (r.stdout + r.stderr)[:200]))
    ref = gen(d, "formats")
    for args in ([], [ref["pcap"], "--depth"], [ref["pcap"], "--depth", "x"], [ref["pcap"], "--udp-port", "70000"],
                 [ref["pcap"], "--orders", "3"], [ref["pcap"], "--lines", "40"], [ref["pcap"], "--bogus"],
                 ["/nonexistent.pcap"], [ref["book"]], [ref["pcap"], "--batch", "--lines", "3"]):
        r = subprocess.run([REPLAY] + args, capture_output=True, text=True)
        ck.check(r.returncode == 2 and len(r.stderr.splitlines()) == 1 and r.stderr.startswith("gnio-itch-replay: "),
                 "gnio-itch-replay %s: exit 2 with one line (exit %d: %r)" % (" ".join(args[1:]) or "(none)",
                                                                              r.returncode, r.stderr[-200:]))
    r0, bbo0, book0 = replay(d, "fmt-us", ref["pcap"])
    for ns, big in ((True, False), (False, True), (True, True)):
        name = "fmt-%s-%s" % ("ns" if ns else "us", "be" if big else "le")
        pcap_variant(ref["pcap"], os.path.join(d, name + ".pcap"), ns, big)
        r, bbo, book = replay(d, name, os.path.join(d, name + ".pcap"))
        ck.check(r0.returncode == 0 and r.returncode == 0 and bbo == bbo0 == open(ref["bbo"]).read() and
                 book == book0, "gnio-itch-replay on a %s pcap: the same files (exit %d: %s)" % (
                     name, r.returncode, r.stderr.strip()))
    # (gnio-itch's net_pcap port reads the nanosecond one too: the same events.)
    r, out = itch(d, "fmt-ns", os.path.join(d, "fmt-ns-le.pcap"))
    ck.check(r.returncode == 0 and open(out["bbo"]).read() == open(ref["bbo"]).read(),
             "gnio-itch on the nanosecond pcap: the reference's events (exit %d)" % r.returncode)


def exit_statuses(ck):
    """Issue 54 item 19: gnio-itch's exit statuses were written nowhere (and SIGINT with a gap open exited
    0: gap_at_end). --help and the README say each one: 0, 1, 2, 3 (the book incomplete)."""
    r = subprocess.run([ITCH, "--", "--help"], capture_output=True, text=True)
    readme = open(os.path.join(SRC, "apps", "gnio-itch", "README.md")).read()
    rows = [l for l in readme.splitlines() if re.match(r"\| [0-3] \| ", l)]
    ck.check(r.returncode == 0 and all(" %d " % k in r.stdout.split("exit status:")[-1] for k in range(4)) and
             "3 the book incomplete" in r.stdout and len(rows) == 4 and "## Exit status" in readme,
             "exit statuses 0 to 3 in --help and in the README (exit %d, %d README rows)" % (r.returncode, len(rows)))


def gap_at_end(d, ck, a):
    """A gap at the end of a feed (a packet in 500 left out, no re-request server): the gap timer
    gives it up without another packet to come, so --exit-at-end exits with every message of the feed
    applied or counted lost, and the exit status says the book is incomplete (3). Stopped (SIGINT)
    while a gap is open (a long timeout): what is held and never applied is counted lost, exit 3."""
    ref = gen(d, "gap-end", "--gap-every", "500")
    want = json.load(open(ref["book"]))
    # (The GPU's --lines path runs its gap timer only as packets come: a feed's heartbeats do it there.)
    if not (a.consumer != "host" and a.lines):
        t0 = time.time()
        r, out = itch(d, "gap-end", ref["pcap"], "--gap-timeout-ms", "300")
        took = time.time() - t0
        got = json.load(open(out["book"])) if os.path.exists(out["book"]) else {}
        print("\n".join(l for l in r.stdout.splitlines() if "incomplete" in l or " packets (" in l))
        ck.check(r.returncode == 3 and "session ended" in r.stdout and took < 50,
                 "gap at the end: given up without another packet, --exit-at-end exits, status 3 (exit %d "
                 "after %.1f s: %s)" % (r.returncode, took, r.stderr.strip()[-300:]))
        ck.check(got.get("lost", 0) > 0 and got.get("messages", 0) + got.get("lost", 0) == want["messages"] and
                 got.get("next_seq") == want["next_seq"] and "the book is incomplete" in r.stdout,
                 "gap at the end: every message applied or counted lost (%s of the reference's %d)" % (
                     {k: got.get(k) for k in ("messages", "lost", "next_seq")}, want["messages"]))
    r, out = itch_sigint(d, "gap-sigint", ref["pcap"], "--gap-timeout-ms", "1000000", "--duration", "120")
    got = json.load(open(out["book"])) if r.returncode in (0, 3) else {}
    print("\n".join(l for l in r.stdout.splitlines() if "incomplete" in l or " packets (" in l))
    ck.check(r.returncode == 3 and got.get("lost", 0) > 0 and
             got.get("messages", 0) + got.get("lost", 0) == want["messages"] and
             got.get("next_seq") == want["next_seq"] and "received and held, never applied" in r.stdout,
             "SIGINT with a gap open: the held messages counted lost in the summary and the book, status 3 "
             "(exit %d, %s: %s)" % (r.returncode, {k: got.get(k) for k in ("messages", "lost", "next_seq")},
                                    r.stderr.strip()[-300:]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--consumer", default="host", choices=["host", "cuda-kernel"])
    ap.add_argument("--lines", action="store_true")
    a = ap.parse_args()
    CONSUMER[1] = a.consumer
    if a.lines:
        # (Tables of a size for these feeds: 31 shards, each able to hold every live order; a test's own win.)
        CONSUMER.extend(["--lines", "--orders", "65536", "--levels", "16384"])
    if a.consumer != "host":
        probe = subprocess.run([os.path.join(BUILD, "tests", "gpu", "test_cuda"), "--probe"],
                               capture_output=True, text=True)
        if probe.returncode != 0:
            print("no CUDA GPU: skipped")
            sys.exit(77)
    ck = Checker("itch-" + a.consumer + ("-lines" if a.lines else ""))
    d = tempfile.mkdtemp(prefix="gnio-itch-")
    for name, args in (("plain", []), ("messy", ["--dup-every", "5", "--reorder-every", "7",
                                                 "--heartbeat-every", "11"])):
        ref = gen(d, name, *args)
        r, out = itch(d, name, ref["pcap"], "--rerequest", "10.9.8.7:4242")
        print(r.stdout.strip())
        ck.check(r.returncode == 0, "%s: exit %d: %s" % (name, r.returncode, r.stderr.strip()[-300:]))
        if r.returncode != 0:
            continue
        ck.check(open(out["bbo"]).read() == open(ref["bbo"]).read(), "%s: the reference's BBO events" % name)
        want, got = json.load(open(ref["book"])), json.load(open(out["book"]))
        ck.check(ref_book(got, want), "%s: the reference's book and counts: %s" % (
            name, {k: (want[k], got.get(k)) for k in want if k != "stocks" and want[k] != got.get(k)}))
        ck.check("conserved; pools full" in r.stdout and "session ended" in r.stdout, "%s: accounted" % name)
        reqs = requests(out["tx"])
        ck.check(len(reqs) == want["gaps"], "%s: one re-request a gap (%d, %d gaps)" % (name, len(reqs), want["gaps"]))
        ck.check(all(ok and s == want["session"].encode() and c > 0 for ok, s, (_, c) in reqs),
                 "%s: each re-request well formed, to --rerequest, for the session" % name)
    # The CPU path's book split by stock locate (31 shards; the GPU path's own book, blocks each
    # applying the stocks of their own): the reference's files on the messy feed; and with tables
    # too small for the feed (book_full, adds refused at both capacities), the same files and
    # counts as one whole book on the CPU: the capacities count every shard's orders and levels.
    split = ["--shards", "31"] if a.consumer == "host" or a.lines else []
    ref = gen(d, "messy", "--dup-every", "5", "--reorder-every", "7")
    # (Tables of a size for this feed: each of 31 shards can hold every live order, 31 times the memory.)
    r, out = itch(d, "split", ref["pcap"], "--rerequest", "10.9.8.7:4242", "--orders", "65536", "--levels", "16384",
                  *split)
    ck.check(r.returncode == 0 and open(out["bbo"]).read() == open(ref["bbo"]).read() and
             ref_book(json.load(open(out["book"])), json.load(open(ref["book"]))),
             "31 shards: the reference's events and book (exit %d: %s)" % (r.returncode, r.stderr.strip()[-300:]))
    # Three stocks: on the GPU path a chunk's shard fills before the chunk does, and each batch is
    # cut where one would pass what a shard holds on chip (itch_fit()): the reference's files.
    few = gen(d, "few", "--stocks", "3")
    r, out = itch(d, "few", few["pcap"], "--backpressure")
    print("\n".join(l for l in r.stdout.splitlines() if "chunks of" in l))
    ck.check(r.returncode == 0 and open(out["bbo"]).read() == open(few["bbo"]).read() and
             ref_book(json.load(open(out["book"])), json.load(open(few["book"]))),
             "3 stocks: the reference's events and book (exit %d: %s)" % (r.returncode, r.stderr.strip()[-300:]))
    # (The GPU path also paced: small batches, chunks of a few packets and messages one at a time
    # mixed; held back, not dropped, where a full book's one-at-a-time path is slower than the pace.)
    paced = ["--rx-pps", "300" if os.environ.get("GNIO_ITCH_WRAP") else "20000", "--backpressure"]
    for small in (["--orders", "512", "--levels", "4096"], ["--orders", "65536", "--levels", "64"]):
        r1, whole = itch(d, "small-whole", ref["pcap"], "--rerequest", "10.9.8.7:4242", *small,
                         consumer=["--consumer", "host"], wrap=a.consumer == "host")
        b1 = json.load(open(whole["book"])) if r1.returncode == 0 else {}
        for pace in ([], paced) if a.consumer != "host" and not a.lines else ([],):
            r2, part = itch(d, "small-split", ref["pcap"], "--rerequest", "10.9.8.7:4242", *small, *split, *pace)
            b2 = json.load(open(part["book"])) if r2.returncode == 0 else {}
            ran = r1.returncode == 0 and r2.returncode == 0
            same = ran and open(whole["bbo"]).read() == open(part["bbo"]).read()
            # (Where the events first differ only when they do.)
            one_lane = [l for l in r2.stdout.splitlines() if "a packet at a time:" in l]
            print("\n".join(one_lane))
            # (--lines: packets whose adds could be refused went through one lane, the others through all.)
            ck.check(not a.lines or (len(one_lane) == 1 and " (0 of them by one lane" not in one_lane[0] and
                                     " 0 packets applied by the lanes" not in one_lane[0]),
                     "%s: --lines: some packets by one lane, some by the lanes: %s" % (" ".join(small), one_lane))
            # (Issue 54 item 10: --orders N held N - 1 orders; what the options say is what is held.)
            held = (sum(x["orders"] for x in b1.get("stocks", [])), sum(len(x["bids"]) + len(x["asks"])
                                                                     for x in b1.get("stocks", [])))
            ck.check(held[0] == int(small[1]) or held[1] == int(small[3]),
                     "%s: a full table holds what the option says (%d orders, %d levels held at the end)" % (
                         " ".join(small), held[0], held[1]))
            ck.check(ran and b1.get("book_full", 0) > 0 and b1 == b2 and same,
                     "%s%s: book_full %s, the same events and book split as whole (exit %d, %d: %s; events "
                     "first differ: %s; counts: %s)" % (
                         " ".join(small), " paced" if pace else "", b1.get("book_full"), r1.returncode,
                         r2.returncode, (r1.stderr + r2.stderr).strip()[-300:],
                         first_diff(whole["bbo"], part["bbo"]) if ran and not same else "-",
                         {k: (b1[k], b2.get(k)) for k in b1 if k != "stocks" and b1[k] != b2.get(k)}))
    # Packets of up to 60 messages (most past the flagged lines' 896 bytes: --lines puts each together
    # from its segments): the reference's files.
    big = gen(d, "long", "--max-per-packet", "60", "--reorder-every", "9")
    r, out = itch(d, "long", big["pcap"], "--rerequest", "10.9.8.7:4242")
    longer = [l for l in r.stdout.splitlines() if "longer than their flagged" in l]
    print("\n".join(longer))
    ck.check(r.returncode == 0 and open(out["bbo"]).read() == open(big["bbo"]).read() and
             ref_book(json.load(open(out["book"])), json.load(open(big["book"]))) and
             (not a.lines or (len(longer) == 1 and ", 0 longer than" not in longer[0])),
             "packets of up to 60 messages: the reference's events and book (exit %d: %s)" % (
                 r.returncode, (r.stderr.strip()[-300:], longer)))
    # --events-udp: every event also as UDP, on the port's own TX queue: the same events as the CSV,
    # in order, each once; the re-requests still on the pipeline's queue.
    ref = gen(d, "messy", "--dup-every", "5", "--reorder-every", "7")
    t0 = time.time_ns()
    r, out = itch(d, "events-udp", ref["pcap"], "--rerequest", "10.9.8.7:4242", "--events-udp", "10.7.7.7:26500",
                  events_tx=True)
    t1 = time.time_ns()
    print("\n".join(l for l in r.stdout.splitlines() if "events as UDP" in l or "tick-to-event" in l))
    lines, ok, rx = events_sent(out["events"]) if r.returncode == 0 else ([], False, [])
    want = open(ref["bbo"]).readlines()
    ck.check(r.returncode == 0 and lines == want and ok, "events-udp: every event once, in order, as the CSV has "
             "it, in well-formed datagrams (%d sent, %d events; exit %d)" % (len(lines), len(want), r.returncode))
    # Each event's RX time: during the run, never earlier than an event before it (one queue, in order).
    ck.check(len(rx) == len(want) and all(t0 <= x <= t1 for x in rx) and rx == sorted(rx),
             "events-udp: each event's RX time within the run and in sequence order (%s .. %s, run %d .. %d)" %
             (rx[:1], rx[-1:], t0, t1))
    tte = [l for l in r.stdout.splitlines() if "tick-to-event" in l]
    ck.check(len(tte) == 1 and (" %d events: p50 " % len(want)) in tte[0],
             "events-udp: tick-to-event of every event reported (%s)" % tte)
    ck.check(r.returncode == 0 and len(requests(out["tx"])) == json.load(open(ref["book"]))["gaps"] and
             "conserved; pools full" in r.stdout, "events-udp: re-requests on the pipeline's queue, accounted")
    # Paced (--rx-pps, slower than the GPU path applies them): the same events, and the latency line.
    ref = gen(d, "plain")
    # (Under a wrapper, a sanitizer, the path is many times slower than paced: it holds reception back.)
    r, out = itch(d, "paced", ref["pcap"], "--rx-pps", "5000",
                  *(["--backpressure"] if os.environ.get("GNIO_ITCH_WRAP") else []))
    lat = [l for l in r.stdout.splitlines() if "RX to completion" in l]
    print("\n".join(lat))
    ck.check(r.returncode == 0 and open(out["bbo"]).read() == open(ref["bbo"]).read(),
             "paced: the reference's BBO events (exit %d)" % r.returncode)
    ck.check(len(lat) == 1 and " p50 " in lat[0] and " p99 " in lat[0], "paced: RX to completion reported")
    # --backpressure: a queue that fills stops reception instead of dropping: the same events.
    r, out = itch(d, "backpressure", ref["pcap"], "--backpressure")
    ck.check(r.returncode == 0 and open(out["bbo"]).read() == open(ref["bbo"]).read(),
             "backpressure: the reference's BBO events (exit %d)" % r.returncode)
    # --udp-port: a feed on another port is not ours.
    ref = gen(d, "plain2")
    r, out = itch(d, "port", ref["pcap"], "--udp-port", "999", "--duration", "2")
    ck.check(r.returncode == 0 and "0 messages" in r.stdout and "conserved" in r.stdout,
             "--udp-port filters: %s" % r.stdout.strip()[-200:])
    # Bad options: exit 2, one line (not under GNIO_ITCH_WRAP: a sanitizer has its own exit status).
    for args in (["--udp-port", "0"], ["--orders", "3"], ["--rerequest", "1.2.3:4"], ["--bogus"], ["--max-gap", "0"],
                 ["--gap-timeout-ms", "x"], ["--book-json", "/nonexistent/x.json"],
                 ["--shards", "32"] if a.consumer == "host" or a.lines else ["--shards", "4"]) + \
            ((["--gpu-blocks", "4"],) if a.lines else ()):
        r, _ = itch(d, "bad", ref["pcap"], *args, wrap=False)
        ck.check(r.returncode == 2 and len([l for l in r.stderr.splitlines() if l.startswith("gnio-itch")]) == 1,
                 "%s: exit 2 with one line: %r" % (" ".join(args), r.stderr.strip()[-200:]))
    ref_zero(d, ck)
    side_x(d, ck)
    bad_sums(d, ck)
    stray(d, ck)
    stray_first(d, ck)
    count_lie(d, ck)
    ip_checks(d, ck)
    request_frame(d, ck)
    replay_agrees(d, ck)
    vlan(d, ck)
    empty_message(d, ck)
    replay_cli(d, ck)
    exit_statuses(ck)
    gap_at_end(d, ck, a)
    drops_add_up(ck)
    # --lines on the GPU: the two warps' turn always handed on (none taken for lack of it).
    lost = [n for n, out in RUNS if "TURNS LOST" in out]
    ck.check(not lost, "the worker warps' turns, none lost (%s)" % lost)
    ck.finish()


if __name__ == "__main__":
    main()
