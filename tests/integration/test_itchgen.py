# SPDX-License-Identifier: BSD-3-Clause
"""gnio-itchgen, the ITCH 5.0 / MoldUDP64 feed generator and reference book of gnio-itch,
and gnio-itch's own books (itch_book.h, and with --batch the GPU path's, itch_batch.h, its
phases run on the CPU, and with --lines the low-latency path's steps, lanes shuffled; all through
gnio-itch-replay): the same BBO events byte for byte and
the same final book as the reference, duplicates skipped; malformed packets
(counts and lengths beyond the packet, zero-length messages, cut headers, unknown types,
wrong lengths) counted, never read past (the sanitizer build runs this too). The generator:
the same bytes for the same seed; frames with right IPv4 and UDP checksums (scapy checks
them); MoldUDP64 sequence numbers that follow each other; every message of the length the
specification gives its type, and every type there; --store holds every message, also those
of the packets left out; gaps, duplicates, reordering, heartbeats and the end of session as
asked; a NASDAQ binary ITCH file converted gives the same book and BBO events; the reference
book is never crossed, its levels add up to its orders, and the last BBO event of each stock
is its final top of book; bad options (out of their bounds, outputs that cannot be opened) exit 2
with one line, an output that cannot be written 1 with one line; --help; 65,535 stocks with
--book-json in linear time."""
import json
import os
import re
import resource
import struct
import subprocess
import sys
import tempfile

from scapy.all import IP, UDP, Ether, Raw, wrpcap

from gnio_run import BUILD, Checker
from udp_frames import udp_frames

GEN = os.path.join(os.environ.get("GNIO_SOURCE", os.path.join(os.path.dirname(__file__), "..", "..")),
                   "apps", "gnio-itch", "gnio-itchgen")
LENGTHS = {"S": 12, "R": 39, "H": 25, "Y": 20, "L": 26, "V": 35, "W": 12, "K": 28, "J": 35, "h": 21,
           "A": 36, "F": 40, "E": 31, "C": 36, "X": 23, "D": 19, "U": 35, "P": 44, "Q": 40, "B": 19,
           "I": 50, "N": 20, "O": 48}


def gen(d, name, *args):
    files = {k: os.path.join(d, name + ext) for k, ext in
             (("pcap", ".pcap"), ("store", ".itch"), ("book", ".json"), ("bbo", ".csv"))}
    r = subprocess.run([sys.executable, GEN, "--pcap", files["pcap"], "--store", files["store"],
                        "--book-json", files["book"], "--bbo-csv", files["bbo"]] + list(args),
                       capture_output=True, text=True, timeout=300)
    return r, files


def moldudp(pcap, ck):
    """(seq, count, messages) of each packet; checks each frame's headers and checksums."""
    out = []
    for _, ip, udp, sums in udp_frames(pcap):
        if not (sums and udp.dport == 26400):
            ck.check(False, "IPv4/UDP checksums and port of every frame")
            return out
        pl = bytes(udp.payload)
        seq, count = struct.unpack_from(">QH", pl, 10)
        msgs, at = [], 20
        while at < len(pl):
            n = struct.unpack_from(">H", pl, at)[0]
            msgs.append(pl[at + 2:at + 2 + n])
            at += 2 + n
        out.append((pl[:10], seq, count, msgs))
    return out


def store(path):
    data, msgs, at = open(path, "rb").read(), [], 0
    while at < len(data):
        n = struct.unpack_from(">H", data, at)[0]
        msgs.append(data[at + 2:at + 2 + n])
        at += 2 + n
    return msgs


REPLAY = os.path.join(BUILD, "apps", "gnio-itch", "gnio-itch-replay")


def replay(pcap, d, name, *args):
    """gnio-itch's book over @pcap: (process, bbo csv text, book json)."""
    bbo, js = os.path.join(d, name + "-r.csv"), os.path.join(d, name + "-r.json")
    r = subprocess.run([REPLAY, pcap, "--bbo-csv", bbo, "--book-json", js] + list(args),
                       capture_output=True, text=True, timeout=300)
    ok = r.returncode in (0, 3)     # (3: messages lost, the book incomplete; its files written)
    return r, open(bbo).read() if ok else "", json.load(open(js)) if ok else {}


def reference_rules(d, ck):
    """The reference book follows gnio-itch's rules on a NASDAQ file (--from-itch): an Add of
    order reference 0 is an order, an Add of side X is refused (malformed); gnio-itch's receiver
    and book (gnio-itch-replay) end with the same book."""
    def msg(b):
        return struct.pack(">H", len(b)) + b
    head = struct.pack(">HH", 1, 0)
    r_ = (b"R" + head + (1).to_bytes(6, "big") + b"GNIO    ").ljust(39, b"N")
    a0 = b"A" + head + (2).to_bytes(6, "big") + struct.pack(">QcI8sI", 0, b"B", 100, b"GNIO    ", 1000)
    ax = b"A" + head + (3).to_bytes(6, "big") + struct.pack(">QcI8sI", 7, b"X", 50, b"GNIO    ", 2000)
    src, pcap, js = (os.path.join(d, "rules" + x) for x in (".itch", ".pcap", ".json"))
    with open(src, "wb") as f:
        f.write(msg(r_) + msg(a0) + msg(ax))
    r = subprocess.run([sys.executable, GEN, "--from-itch", src, "--pcap", pcap, "--book-json", js],
                       capture_output=True, text=True, timeout=60)
    book = json.load(open(js))["stocks"] if r.returncode == 0 else []
    ck.check(book and book[0]["bids"] == [[1000, 100, 1]] and book[0]["asks"] == [] and
             book[0]["orders"] == 1, "reference: reference 0 booked, side X refused: %r %s" % (book, r.stderr))
    r, _, rj = replay(pcap, d, "rules")
    ck.check(rj.get("stocks") == book, "gnio-itch-replay's book equals the reference's: %r" % rj.get("stocks"))


def malformed(d, ck, *args):
    """Packets a parser must not trust: each counted, nothing read past the packet."""
    def mold(seq, count, body):
        return b"GNIO000001" + struct.pack(">QH", seq, count) + body

    def msg(m):
        return struct.pack(">H", len(m)) + m
    add = b"A" + struct.pack(">HH", 1, 0) + (1).to_bytes(6, "big") + struct.pack(">QcI", 5, b"B", 100) + \
        b"ZZZ     " + struct.pack(">I", 10000)
    dele = b"D" + struct.pack(">HH", 1, 0) + (2).to_bytes(6, "big") + struct.pack(">Q", 5)
    payloads = [
        mold(1, 1, msg(add)),                                   # seq 1: a good add
        mold(2, 1, msg(add[:35])),                              # 2: a wrong length
        mold(3, 4, msg(add)),                                   # 3-6: a count beyond the packet's messages
        mold(7, 1, struct.pack(">H", 200) + add),               # 7: a length beyond the packet
        mold(8, 1, msg(b"")),                                   # 8: zero length
        b"GNIO0000",                                            # a cut header
        mold(9, 1, msg(b"Z" + add[1:])),                        # 9: an unknown type
        mold(10, 1, b"\x00"),                                  # 10: half a length
        mold(11, 1, msg(dele)),                                 # 11: a good delete
    ]
    pcap = os.path.join(d, "malformed.pcap")
    wrpcap(pcap, [Ether() / IP(src="10.0.0.1", dst="233.54.12.1") / UDP(sport=1, dport=26400) / Raw(p)
                  for p in payloads])
    r, bbo, book = replay(pcap, d, "malformed", *args)
    print(r.stdout.strip() or r.stderr.strip())
    # (gnio-itch's receiver: a packet whose count is not its messages is dropped whole; what it and the
    # other malformed packets did not give is a gap, given up at the end: 3-7, 10)
    ck.check(r.returncode == 3 and "6 messages lost" in r.stdout, "malformed packets: replay exit 3, 6 messages "
             "lost: %s" % r.stderr)
    ck.check("unknown type 1" in r.stdout and "malformed 6" in r.stdout,
             "counted: 1 unknown type (Z), 6 malformed (zero length, a wrong length, a count and "
             "two lengths beyond the packet, a cut header)")
    ck.check(bbo.count("\n") == 2 and book.get("stocks", [{}])[0].get("orders") == 0,
             "the good add and delete applied around them: %r" % bbo)


def big(d, ck):
    """Every stock locate there is (65,535) with --book-json, in linear time: at most 40 s of CPU
    (the limit is set on the generator; scanning every live order for each stock, as the book's
    order counts once did, takes over 15 minutes of it); the book has every stock, its levels
    adding up to its orders, and the orders to the live orders the generator counts."""
    path = os.path.join(d, "big.json")
    cmd = [sys.executable, GEN, "--stocks", "65535", "--messages", "100000", "--depth", "100000",
           "--pcap", os.path.join(d, "big.pcap"), "--book-json", path]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=280,
                           preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CPU, (40, 40)))
    except subprocess.TimeoutExpired:
        ck.check(False, "65,535 stocks with --book-json: done within 280 s")
        return
    print(r.stdout.strip())
    ck.check(r.returncode == 0, "65,535 stocks with --book-json: done in 40 s of CPU (%d: %s)" %
             (r.returncode, r.stderr.strip()[-200:]))
    if r.returncode != 0:
        return
    book = json.load(open(path))
    live = int(re.search(r"(\d+) live orders", r.stdout).group(1))
    ck.check(len(book["stocks"]) == 65535 and
             all(sum(l[2] for l in s["bids"] + s["asks"]) == s["orders"] for s in book["stocks"]) and
             sum(s["orders"] for s in book["stocks"]) == live,
             "65,535 stocks in the book, their levels adding up to their orders, %d live orders" % live)


def main():
    ck = Checker("itchgen")
    d = tempfile.mkdtemp(prefix="gnio-itchgen-")
    r1, f1 = gen(d, "a", "--seed", "7", "--messages", "30000", "--stocks", "50", "--depth", "100000")
    r2, f2 = gen(d, "b", "--seed", "7", "--messages", "30000", "--stocks", "50", "--depth", "100000")
    ck.check(r1.returncode == 0 and r2.returncode == 0, "generated: %s %s" % (r1.stderr, r2.stderr))
    print(r1.stdout.strip())
    for k in f1:
        ck.check(open(f1[k], "rb").read() == open(f2[k], "rb").read(), "same seed, same %s" % k)
    pk = moldudp(f1["pcap"], ck)
    msgs = store(f1["store"])
    data = [p for p in pk if p[2] not in (0, 0xFFFF)]
    ck.check(all(p[0] == pk[0][0] for p in pk), "one session")
    ck.check(pk[-1][2] == 0xFFFF and pk[-1][1] == len(msgs) + 1, "ends with end of session at the next seq")
    nxt, flat = 1, []
    for _, seq, count, m in data:
        ck.check(seq == nxt and count == len(m), "packet at seq %d (expected %d), count %d" % (seq, nxt, count))
        nxt += count
        flat += m
    ck.check(flat == msgs, "--store holds the messages of the pcap, in order")
    types = {m[:1].decode() for m in msgs}
    ck.check(types == set(LENGTHS), "every type of the specification: missing %s" % (set(LENGTHS) - types))
    ck.check(all(len(m) == LENGTHS[m[:1].decode()] for m in msgs), "every message of its type's length")
    book = json.load(open(f1["book"]))
    ck.check(book["messages"] == len(msgs) and book["next_seq"] == len(msgs) + 1 and
             book["packets"] == len(pk) and book["gaps"] == 0 and book["duplicates"] == 0, "counts")
    ck.check(0 < book["unknown_ref"] < len(msgs) // 100, "a few unknown order references: %d" % book["unknown_ref"])
    last = {}
    for line in open(f1["bbo"]):
        v = [int(x) for x in line.split(",")]
        last[v[1]] = v[3:]
    for s in book["stocks"]:
        bids, asks = s["bids"], s["asks"]
        ck.check(not bids or not asks or bids[0][0] < asks[0][0], "stock %d not crossed" % s["locate"])
        ck.check(sum(l[2] for l in bids + asks) == s["orders"], "stock %d: levels add up" % s["locate"])
        top = [bids[0][0], bids[0][1]] if bids else [0, 0]
        top += [asks[0][0], asks[0][1]] if asks else [0, 0]
        ck.check(last.get(s["locate"], [0, 0, 0, 0]) == top, "stock %d: last BBO event is the top" % s["locate"])
    ck.check(all(b[i][0] > b[i + 1][0] for s in book["stocks"] for b in [s["bids"]] for i in range(len(b) - 1))
             and all(a[i][0] < a[i + 1][0] for s in book["stocks"] for a in [s["asks"]] for i in range(len(a) - 1)),
             "bids best (highest) first, asks best (lowest) first")
    # Recovery material: packets left out (in --store), twice, swapped, heartbeats.
    r3, f3 = gen(d, "c", "--seed", "7", "--messages", "30000", "--stocks", "50", "--gap-every", "5",
                 "--dup-every", "7", "--reorder-every", "11", "--heartbeat-every", "13")
    pk3 = moldudp(f3["pcap"], ck)
    b3 = json.load(open(f3["book"]))
    data3 = [p for p in pk3 if p[2] not in (0, 0xFFFF)]
    seqs = sorted({p[1] for p in data3})
    covered = sum(p[2] for p in {p[1]: p for p in data3}.values())
    ck.check(r3.returncode == 0 and b3["gaps"] > 0 and b3["duplicates"] > 0, "gaps and duplicates made")
    ck.check(len(data3) - len(seqs) == b3["duplicates"], "duplicates as counted")
    ck.check(covered < b3["messages"] and store(f3["store"]) == msgs, "packets left out; --store has them all")
    ck.check(any(p[2] == 0 for p in pk3), "heartbeats")
    ck.check(any(data3[i][1] > data3[i + 1][1] for i in range(len(data3) - 1)), "reordered")
    ck.check(open(f3["bbo"]).read() == open(f1["bbo"]).read(), "the same reference events")
    # A NASDAQ binary ITCH file (2-byte lengths) converted: the same book and events.
    r4, f4 = gen(d, "d", "--from-itch", f1["store"], "--depth", "100000")
    b4 = json.load(open(f4["book"]))
    ck.check(r4.returncode == 0 and b4["stocks"] == book["stocks"] and store(f4["store"]) == msgs and
             open(f4["bbo"]).read() == open(f1["bbo"]).read(), "converted: same book, events, messages")
    # gnio-itch's book (itch_book.h) against the reference: the same events and book.
    r5, bbo5, book5 = replay(f1["pcap"], d, "a", "--depth", "100000")
    print(r5.stdout.strip())
    ck.check(r5.returncode == 0 and bbo5 == open(f1["bbo"]).read(), "itch_book.h: the same BBO events")
    ck.check(book5 == book, "itch_book.h: the same final book and counts")
    r6, f6 = gen(d, "e", "--seed", "7", "--messages", "30000", "--stocks", "50", "--dup-every", "3",
                 "--heartbeat-every", "5")
    r6, bbo6, book6 = replay(f6["pcap"], d, "e")
    ck.check(r6.returncode == 0 and bbo6 == open(f1["bbo"]).read() and
             book6 == json.load(open(f6["book"])), "itch_book.h: duplicates and heartbeats skipped")
    r7, bbo7, book7 = replay(f1["pcap"], d, "small", "--orders", "1024")
    ck.check(r7.returncode == 0 and book7["book_full"] > 0, "a full order table: book_full, no crash")
    # The GPU path's book (itch_batch.h: chunks of messages applied at once), its phases run on the CPU:
    # the same events and book, also with tables too small (adds refused, the chunks cut there).
    # --batch-shards: as the GPU's blocks do, each the stocks of its own.
    for shards in ("1", "3"):
        r8, bbo8, book8 = replay(f1["pcap"], d, "batch", "--depth", "100000", "--batch", "--batch-shards", shards)
        print(r8.stdout.strip())
        ck.check(r8.returncode == 0 and bbo8 == open(f1["bbo"]).read() and book8 == book,
                 "itch_batch.h, %s shard(s): the same BBO events, final book and counts" % shards)
    for small in (["--orders", "1024"], ["--levels", "128"]):
        r9, bbo9, book9 = replay(f1["pcap"], d, "small-serial", *small)
        r10, bbo10, book10 = replay(f1["pcap"], d, "small-batch", "--batch", "--batch-shards", "2", *small)
        ck.check(r9.returncode == 0 and r10.returncode == 0 and book9["book_full"] > 0 and
                 (bbo10, book10) == (bbo9, book9), "itch_batch.h, %s: book_full %s, the same events and "
                 "book as itch_book.h" % (" ".join(small), book9.get("book_full")))
    # The low-latency path (itch_lines.h), its steps with the lanes in a new shuffled order for every
    # packet (on the GPU they run at once), the CPU path's book in shards: the same events and book; with
    # tables too small, the same as itch_book.h whole (packets whose adds could be refused by one lane).
    fit = ["--orders", "65536", "--levels", "16384"]
    for shards in ("31", "3"):
        r11, bbo11, book11 = replay(f1["pcap"], d, "lines", "--depth", "100000", "--lines", shards, *fit)
        print(r11.stdout.strip())
        ck.check(r11.returncode == 0 and bbo11 == open(f1["bbo"]).read() and book11 == book,
                 "itch_lines.h, %s shard(s), lanes shuffled: the same BBO events, final book and counts" % shards)
    for small in (["--orders", "1024", "--levels", "16384"], ["--orders", "65536", "--levels", "128"]):
        r12, bbo12, book12 = replay(f1["pcap"], d, "small-whole", *small)
        r13, bbo13, book13 = replay(f1["pcap"], d, "small-lines", "--lines", "7", *small)
        print(r13.stdout.strip())
        ck.check(r12.returncode == 0 and r13.returncode == 0 and book12["book_full"] > 0 and
                 (bbo13, book13) == (bbo12, book12) and " 0 of them by one" not in r13.stdout,
                 "itch_lines.h, %s: book_full %s, the same events and book as itch_book.h, some packets by one "
                 "lane" % (" ".join(small), book12.get("book_full")))
    malformed(d, ck)
    malformed(d, ck, "--batch")
    # Bad input: one line each, no traceback (stock locates are 16 bits; a packet holds at least
    # the longest message; an output that cannot be opened is refused before any work).
    for args in (["--messages", "0"], ["--from-itch", "/nonexistent"], ["--depth", "0"], ["--messages", "x"],
                 ["--stocks", "70000"], ["--max-payload", "10"], ["--max-payload", "71"], ["--max-payload", "70000"],
                 ["--max-per-packet", "65535"], ["--udp-port", "70000"], ["--src-ip", "1.2.3"], ["--skew", "nan"],
                 ["--skew", "1000"], ["--gap-every", "-1"], ["--pcap", "/nonexistent/f.pcap"],
                 ["--book-json", "/nonexistent/b.json"], ["--bogus"]):
        r, _ = gen(d, "bad", *args)
        ck.check(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr,
                 "%s: exit 2, one line: %r" % (" ".join(args), r.stderr))
    # An output that cannot be written (a full device): exit 1, one line naming it.
    r, _ = gen(d, "full", "--messages", "100", "--stocks", "5", "--pcap", "/dev/full")
    ck.check(r.returncode == 1 and r.stderr.strip().splitlines() == ["gnio-itchgen: --pcap=/dev/full: No space left "
                                                                     "on device"], "--pcap=/dev/full: exit 1, one "
             "line: %r" % r.stderr)
    r = subprocess.run([sys.executable, GEN, "--help"], capture_output=True, text=True, timeout=60)
    ck.check(r.returncode == 0 and "--max-payload" in r.stdout and "--book-json" in r.stdout, "--help: exit 0, "
             "the options")
    big(d, ck)
    reference_rules(d, ck)
    with open(os.path.join(d, "junk.itch"), "wb") as f:
        f.write(struct.pack(">H", 5) + b"Zjunk")
    r, _ = gen(d, "bad", "--from-itch", os.path.join(d, "junk.itch"))
    ck.check(r.returncode == 2 and "unknown type" in r.stderr, "a message of an unknown type refused: %r" % r.stderr)
    ck.finish()


if __name__ == "__main__":
    main()
