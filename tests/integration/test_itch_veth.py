# SPDX-License-Identifier: BSD-3-Clause
"""gnio-itch on a real interface, with a real re-request server: gnio-itchgen's pcap replayed
by tcpreplay into a veth pair whose other end is in a network namespace, gnio-itch reading it
through net_af_packet; in the namespace a MoldUDP64 re-request server (this file, --server)
answers from the feed's --store over the kernel's UDP stack.
 - Packets left out, sent twice, reordered, heartbeats, a packet of another session: every
   gap filled by re-requests; the BBO events byte for byte and the book equal to the
   reference's, nothing lost; the other session counted and ignored; the end of session
   ends the run.
 - The server ignoring every request: each gap is lost after --gap-timeout-ms, counted
   (exactly the messages of the packets left out), and the feed goes on to its end.
Needs root (namespaces), tcpreplay and ip; else skipped (77)."""
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

SRC = os.environ.get("GNIO_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))
GEN = os.path.join(SRC, "apps", "gnio-itch", "gnio-itchgen")


def server(store, port, mode):
    """The re-request server (in the namespace): answers (session, seq, count) from --store."""
    data, msgs, at = open(store, "rb").read(), [], 0
    while at < len(data):
        n = struct.unpack_from(">H", data, at)[0]
        msgs.append(data[at + 2:at + 2 + n])
        at += 2 + n
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    # (No UDP checksum on the answers: on a veth the kernel leaves a sent datagram's checksum for the
    # device to fill in, and net_af_packet hands gnio-itch the unfilled one, which it drops as bad_csum.)
    s.setsockopt(socket.SOL_SOCKET, 11, 1)      # SO_NO_CHECK
    s.bind(("10.0.0.1", port))
    s.settimeout(120)
    answered = 0
    print("server: ready", flush=True)
    while True:
        req, peer = s.recvfrom(2048)
        if req == b"quit":
            break
        if len(req) < 20:
            continue
        session, seq, count = req[:10], *struct.unpack(">QH", req[10:20])
        if mode == "ignore":
            print("server: ignored %d+%d" % (seq, count), flush=True)
            continue
        first = seq
        while first < seq + count and first <= len(msgs):
            part = msgs[first - 1:min(seq + count, first + 20) - 1]
            body = b"".join(struct.pack(">H", len(m)) + m for m in part)
            s.sendto(session + struct.pack(">QH", first, len(part)) + body, peer)
            first += len(part)
        answered += 1
    print("server: answered %d requests" % answered, flush=True)


def sh(*cmd, check=True):
    return subprocess.run(cmd, capture_output=True, text=True, check=check)


class Veth:
    """vA here (gnio-itch's), vB in a namespace with the server at 10.0.0.1."""

    def __init__(self):
        self.ns = "gnio-itch-%d" % os.getpid()
        self.a, self.b = "gia%d" % (os.getpid() % 100000), "gib%d" % (os.getpid() % 100000)
        sh("ip", "netns", "add", self.ns)
        sh("ip", "link", "add", self.a, "type", "veth", "peer", "name", self.b)
        sh("ip", "link", "set", self.b, "netns", self.ns)
        sh("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % self.a, check=False)
        sh("ip", "link", "set", self.a, "up")
        mac = open("/sys/class/net/%s/address" % self.a).read().strip()
        for cmd in (["addr", "add", "10.0.0.1/24", "dev", self.b], ["link", "set", self.b, "up"],
                    ["link", "set", "lo", "up"],
                    ["neigh", "add", "10.0.0.2", "lladdr", mac, "dev", self.b, "nud", "permanent"]):
            sh("ip", "-n", self.ns, *cmd)

    def close(self):
        sh("ip", "link", "del", self.a, check=False)
        sh("ip", "netns", "del", self.ns, check=False)


def run(v, d, name, pcap, store, mode, timeout_ms, pps):
    """Server, gnio-itch, tcpreplay: gnio-itch's (process, stdout, events, book)."""
    from gnio_run import BUILD, eal_mem
    srv = subprocess.Popen(["ip", "netns", "exec", v.ns, sys.executable, __file__, "--server", store, "26401",
                            mode], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    srv.stdout.readline()
    bbo, book = os.path.join(d, name + ".csv"), os.path.join(d, name + ".json")
    itch = subprocess.Popen([os.path.join(BUILD, "apps", "gnio-itch", "gnio-itch"), "-l", "0-1"] + eal_mem() +
                            ["--vdev=net_af_packet0,iface=%s" % v.a, "--", "--exit-at-end", "--duration", "90",
                             "--gap-timeout-ms", str(timeout_ms), "--rerequest", "10.0.0.1:26401",
                             "--local", "10.0.0.2:26402", "--udp-port", "26400", "--depth", "100000",
                             "--bbo-csv", bbo, "--book-json", book],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = itch.stdout.readline()
    while line and "port(s)" not in line:
        line = itch.stdout.readline()
    time.sleep(0.5)
    rep = sh("ip", "netns", "exec", v.ns, "tcpreplay", "-q", "-i", v.b, "--pps=%d" % pps, pcap, check=False)
    try:
        out, _ = itch.communicate(timeout=100)
    except subprocess.TimeoutExpired:
        itch.send_signal(signal.SIGINT)
        out, _ = itch.communicate(timeout=30)
    q = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sh("ip", "netns", "exec", v.ns, sys.executable, "-c",
       "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'quit', ('10.0.0.1', 26401))")
    q.close()
    sout, _ = srv.communicate(timeout=30)
    print(out.strip())
    print(sout.strip().splitlines()[-1] if sout.strip() else "server: no output")
    if rep.returncode != 0:
        print("tcpreplay:", rep.stdout, rep.stderr)
    ev = open(bbo).read() if os.path.exists(bbo) else ""
    bk = json.load(open(book)) if os.path.exists(book) and os.path.getsize(book) else {}
    return itch, out, ev, bk


def main():
    from gnio_run import Checker
    from scapy.all import Ether, IP, UDP, Raw, rdpcap, wrpcap
    if os.geteuid() != 0 or not shutil.which("tcpreplay") or not shutil.which("ip"):
        print("needs root, tcpreplay and ip: skipped")
        sys.exit(77)
    ck = Checker("itch-veth")
    d = tempfile.mkdtemp(prefix="gnio-itch-veth-")
    f = {k: os.path.join(d, "feed" + e) for k, e in (("pcap", ".pcap"), ("store", ".itch"), ("book", ".json"),
                                                        ("bbo", ".csv"))}
    subprocess.run([sys.executable, GEN, "--seed", "5", "--messages", "20000", "--stocks", "40", "--depth",
                    "100000", "--gap-every", "37", "--dup-every", "11", "--reorder-every", "13",
                    "--heartbeat-every", "29", "--pcap", f["pcap"], "--store", f["store"],
                    "--book-json", f["book"], "--bbo-csv", f["bbo"]], check=True, capture_output=True)
    v = Veth()
    # The feed comes from the namespace's end (re-requests go back to the feed's source MAC).
    mac_b = sh("ip", "netns", "exec", v.ns, "cat", "/sys/class/net/%s/address" % v.b).stdout.strip()

    def from_b(pcap):
        pk = rdpcap(pcap)
        for x in pk:
            x[Ether].src = mac_b
        wrpcap(pcap, pk)
    from_b(f["pcap"])
    # A packet of another session, which the receiver must leave alone.
    pk = rdpcap(f["pcap"])
    stray = pk[5].copy()
    stray[Raw].load = b"OTHERSESS1" + bytes(stray[Raw].load)[10:]
    del stray[IP].chksum
    del stray[UDP].chksum
    pk.insert(6, Ether(bytes(stray)))
    wrpcap(f["pcap"], pk)
    want = json.load(open(f["book"]))
    try:
        p, out, ev, book = run(v, d, "filled", f["pcap"], f["store"], "answer", 2000, 5000)
        ck.check(p.returncode == 0 and "session ended" in out and "conserved; pools full" in out,
                 "gaps filled: exit %s, ended, accounted" % p.returncode)
        ck.check(ev == open(f["bbo"]).read(), "gaps filled: the reference's BBO events")
        ck.check(book.get("stocks") == want["stocks"] and book.get("lost") == 0 and
                 book.get("next_seq") == want["next_seq"], "gaps filled: the reference's book, nothing lost")
        ck.check(book.get("gaps", 0) > 0 and "other sessions 1" in out, "gaps counted, the other session ignored")
        # The server ignores every request: each gap lost after the timeout, the feed goes on.
        g = {k: os.path.join(d, "lossy" + e) for k, e in (("pcap", ".pcap"), ("store", ".itch"))}
        subprocess.run([sys.executable, GEN, "--seed", "6", "--messages", "6000", "--stocks", "20",
                        "--gap-every", "150", "--pcap", g["pcap"], "--store", g["store"]], check=True,
                       capture_output=True)
        from_b(g["pcap"])
        seqs = set()
        for pkt in rdpcap(g["pcap"]):
            b = bytes(pkt[Raw].load)
            s, c = struct.unpack(">QH", b[10:20])
            if c not in (0, 0xFFFF):
                seqs.update(range(s, s + c))
        total = len(open(g["store"], "rb").read()) and max(seqs)
        lost = total - len(seqs)
        p, out, ev, book = run(v, d, "lossy", g["pcap"], g["store"], "ignore", 50, 1000)
        # (Messages lost: the book is incomplete, exit 3.)
        ck.check(p.returncode == 3 and "session ended" in out, "gaps lost: exit %s, ended" % p.returncode)
        ck.check(lost > 0 and book.get("lost") == lost, "gaps lost: %s messages lost, %d left out" % (
            book.get("lost"), lost))
    finally:
        v.close()
    ck.finish()


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--server":
        server(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        main()
