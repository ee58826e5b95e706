# SPDX-License-Identifier: BSD-3-Clause
"""A configuration file (gnio_conf_file_load()) through the module: gnio.Pipeline(eal, "file.yaml")
and gnio.Conf.load() take gnio_conf's fields by the dict's names, nested or written out, and make
the same pipeline as the dict does; what is set after the file overrides it; a bad field or value
raises gnio.Error with the library's line naming the file, the line and the field; a file that
is not there raises with its errno."""
import errno
import os
import tempfile

from scapy.all import IP, UDP, Ether, Raw, RawPcapReader, wrpcap  # noqa
import logging
logging.getLogger("scapy.runtime").setLevel(logging.ERROR)

from gnio_run import Checker, eal_mem

import gnio

ck = Checker("python-conf")
tmp = tempfile.mkdtemp(prefix="gnio-py-conf-")
inp = os.path.join(tmp, "in.pcap")
wrpcap(inp, [Ether() / IP() / UDP(sport=i, dport=7) / Raw(b"x" * 10) for i in range(50)])
yaml = os.path.join(tmp, "run.yaml")
with open(yaml, "w") as f:
    f.write("# a run of 50 packets\n"
            "consumer:\n  name: host\n  handler: 5tswap\n"
            "gpu.name: host\n"
            "rx: {burst: 16, max_packets: 50}\n"
            "queue:\n  item_pkts: 64\n  ring_items: 32\n")
fields = {"consumer": {"name": "host", "handler": "5tswap"}, "gpu.name": "host",
          "rx": {"burst": 16, "max_packets": 50}, "queue": {"item_pkts": 64, "ring_items": 32}}


def dev(n):
    return "net_pcap0,rx_pcap=%s,tx_pcap=%s" % (inp, os.path.join(tmp, "out%d.pcap" % n))


eal = ["-l", "0-1"] + eal_mem() + ["--vdev=" + dev(0)]
with gnio.Pipeline(eal, yaml) as p:
    from_file = p.effective()
    ck.check(p.wait(60), "the file's run")
ck.check(p.check()["ok"] and p.stats()["total"]["tx"] == 50, "50 forwarded: %s" % (p.summary(),))
ck.check(len(list(RawPcapReader(os.path.join(tmp, "out0.pcap")))) == 50, "sent")
gnio.probe(dev(1))
with gnio.Pipeline(None, fields) as p:
    from_dict = p.effective()
    p.wait(60)
ck.check(from_file == from_dict and from_file["rx.burst"] == 16 and from_file["queue.ring_items"] == 32 and
         from_file["consumer.handler"] == "5tswap", "the file and the dict make the same pipeline:\n%s\n%s" %
         (from_file, from_dict))
gnio.probe(dev(2))
c = gnio.Conf.load(yaml).update({"rx.burst": 8, "queue.item_pkts": 32})
ck.check(c.items() == [(yaml,), ("rx.burst", "8"), ("queue.item_pkts", "32")], "items: %s" % c.items())
with gnio.Pipeline(None, c) as p:
    e = p.effective()
    p.wait(60)
ck.check(e["rx.burst"] == 8 and e["queue.item_pkts"] == 32 and e["queue.ring_items"] == 32,
         "what is set after the file overrides it: %s" % e)

for text, line, want in (("rx:\n  burst: 16\n  bursts: 4\n", 3, "rx.bursts: no such field of gnio_conf"),
                         ("mem.mode: vram\n", 1, 'mem.mode: "vram" is not a value of it'),
                         ("consumer: {name: host}\nrx: {burst: many}\n", 2, 'rx.burst: "many" is not a value of it'),
                         ("rx:\n  burst: [1, 2]\n", 2, "rx.burst: a list is not a value of it")):
    bad = os.path.join(tmp, "bad.yaml")
    with open(bad, "w") as f:
        f.write(text)
    for how, fn in (("Conf.load", lambda: gnio.Conf.load(bad)), ("Pipeline", lambda: gnio.Pipeline(None, bad))):
        try:
            fn()
            ck.check(False, "%s %r: no error" % (how, text))
        except gnio.Error as ex:
            ck.check(str(ex) == "%s:%d: %s" % (bad, line, want) and ex.errno == errno.EINVAL,
                     "%s: %s (errno %s)" % (how, ex, ex.errno))
try:
    gnio.Conf.load(os.path.join(tmp, "none.yaml"))
    ck.check(False, "a missing file: no error")
except gnio.Error as ex:
    ck.check(ex.errno == errno.ENOENT and "none.yaml" in str(ex), "a missing file: %s" % ex)
ck.finish()
