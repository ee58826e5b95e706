# SPDX-License-Identifier: BSD-3-Clause
"""--config FILE.yaml (gnio_conf's fields by their names, nested by part or in full) for
gnio-testpmd, gnio-itch and gnio-infer: the file's fields show in the run (gnio-testpmd's --json
configuration, gnio-itch's and gnio-infer's counts); an option given beside the file overrides
its field, an option left at its default does not; a field the app sets itself is refused; a bad
file, field or value exits 2 with one line naming the file, its line and the field (with the
app's option where it has one), before anything is forwarded; a --config that is not a regular
file is refused before it is opened. The argument names the app:
testpmd, itch or infer."""
import json
import os
import subprocess
import sys
import tempfile

from gnio_run import BUILD, TESTPMD, Checker, eal_mem

SRC = os.environ.get("GNIO_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))
ITCH = os.path.join(BUILD, "apps", "gnio-itch", "gnio-itch")
ITCHGEN = os.path.join(SRC, "apps", "gnio-itch", "gnio-itchgen")
INFER = os.path.join(BUILD, "apps", "gnio-infer", "gnio-infer")
INFER_CLIENT = os.path.join(SRC, "apps", "gnio-infer", "gnio-infer-client")
INFER_MODEL = os.path.join(SRC, "apps", "gnio-infer", "digits-mlp.bin")
INFER_TESTSET = os.path.join(SRC, "apps", "gnio-infer", "digits-test.bin")


def write(d, name, text):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def one_line(ck, r, app, what, *needles):
    """Exit 2, one line on stderr (the EAL's own lines aside) naming each of @needles."""
    lines = [l for l in r.stderr.splitlines() if not l.startswith("EAL: ")]
    ck.check(r.returncode == 2 and len(lines) == 1 and lines[0].startswith(app + ": ") and
             all(n in lines[0] for n in needles),
             "%s: want exit 2 and one line naming %s, got exit %d: %r" % (what, needles, r.returncode, lines))
    return lines[0] if lines else ""


def bad_files(ck, d, run, app, cases):
    """Each (file text, extra options, what the line names) refused in one line, nothing forwarded."""
    for text, extra, needles in cases:
        path = write(d, "bad.yaml", text)
        r = run(["--config", path] + extra)
        line = one_line(ck, r, app, "%r %s" % (text, extra), *[n.replace("FILE", path) for n in needles])
        ck.check("forwarding" not in r.stdout and "answered" not in r.stdout and " packets (" not in r.stdout,
                 "%r: refused before any packet: %s" % (text, r.stdout[-300:]))
        print("%r %s -> %s" % (text, " ".join(extra), line))


def not_regular(ck, d, run, app):
    """A --config that is not a regular file (a directory, a FIFO, a pipe, a device) refused in one
    line before it is opened: a FIFO with no writer blocked the app in open(), a pipe was read once
    by the library and again, empty, by the app (its fields applied in part, exit 0)."""
    fifo = os.path.join(d, "fifo.yaml")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    rfd, wfd = os.pipe()
    os.write(wfd, b"rx.max_packets: 10\nrx.burst: 0\n")
    os.close(wfd)
    pipe = "/dev/fd/%d" % rfd
    for path, says, kw in ((d, "--config=%s: Is a directory" % d, {}),
                           (fifo, "--config=%s: not a regular file" % fifo, {}),
                           ("/dev/zero", "--config=/dev/zero: not a regular file", {}),
                           (pipe, "--config=%s: not a regular file" % pipe, {"pass_fds": (rfd,)})):
        try:
            r = run(["--config", path], timeout=20, **kw)
        except subprocess.TimeoutExpired:
            ck.check(False, "--config %s: still running after 20 s" % path)
            continue
        line = one_line(ck, r, app, "--config " + path, says)
        print("--config %s -> %s" % (path, line))
    os.close(rfd)
    # A name with a newline, quoted escaped.
    nl = os.path.join(d, "dir\nname")
    os.makedirs(nl, exist_ok=True)
    one_line(ck, run(["--config", nl]), app, "a directory named with a newline",
             "--config=%s: Is a directory" % nl.replace("\n", "\\n"))


def common_refusals(d, app):
    """What every app refuses alike: the file's form, the library's names and values."""
    missing = os.path.join(d, "no-such.yaml")
    return [
        ("rx:\n  burst: 16\n  bursts: 8\n", [], ["FILE:3: rx.bursts: no such field of gnio_conf"]),
        ("mem:\n  mode: vram\n", [], ["FILE:2: mem.mode", '"vram" is not a value of it']),
        ("rx.burst: [1, 2]\n", [], ["FILE:1: rx.burst", "a list is not a value of it"]),
        ("rx: {burst: 16\n", [], ["FILE:2: not YAML"]),
        ("- rx.burst\n", [], ["FILE:1: not a mapping of gnio_conf's fields"]),
        ("rx.burst: 16\n---\nrx.bursts: 8\n", [], ["FILE:2: a second document"]),
        ('rx.burst: "16\\0junk"\n', [], ["FILE:1: rx.burst", "a value with a NUL character"]),
        # A control character quoted in a reason is escaped: one line still.
        ('mem.mode: "a\\nb\\t\\x01"\n', [], ["FILE:1: mem.mode", '"a\\nb\\t\\x01" is not a value of it']),
        ('consumer:\n  name: "a\\nb"\n', [], ["FILE:2: consumer.name (--consumer)=a\\nb: "]),
        ("ports.nb_rxq: 1\nrx.burst: 16\nports:\n  nb_rxq: 1\n", [],
         ["FILE:4: ports.nb_rxq", "given twice, first on line 1"]),
        ("rx.burst: 16\n", ["--config", missing], ["--config", "one file only"]),
    ], missing


def testpmd(ck, d):
    eal = ["-l", "0-1"] + eal_mem() + ["--vdev=net_null0", "--vdev=net_null1", "--"]

    def run(opts, **kw):
        js = os.path.join(d, "run.json")
        if os.path.exists(js):
            os.unlink(js)
        r = subprocess.run([TESTPMD] + eal + ["--max-packets=2000", "--duration=20", "--json=" + js] + opts,
                           capture_output=True, text=True, **{"timeout": 120, **kw})
        r.json = json.load(open(js)) if r.returncode == 0 and os.path.exists(js) else {}
        return r

    good = write(d, "run.yaml", "# a run\nrx:\n  burst: 16\nqueue.ring_items: 128\n"
                 "consumer: {name: host, drain_ms: 1234, handler: macswap}\ngpu.name: host\n")
    r = run(["--config", good])
    j = r.json
    ck.check(r.returncode == 0 and (j.get("burst"), j.get("ring_items"), j.get("drain_ms"), j.get("consumer"),
                                    j.get("forward_mode")) == (16, 128, 1234, "host", "macswap"),
             "the file's fields in --json's configuration (--forward-mode's default io not over the file's "
             "consumer.handler): exit %d %s %s" % (r.returncode, {k: j.get(k) for k in ("burst", "ring_items",
                                                                                        "drain_ms", "consumer",
                                                                                        "forward_mode")},
                                                  r.stderr.strip()[-300:]))
    # Options override the file wherever they stand; the rest of the file stays.
    for opts in (["--burst=8", "--config", good, "--forward-mode=io"], ["--config=" + good, "--burst", "8",
                                                                         "--forward-mode", "io"]):
        r = run(opts)
        j = r.json
        ck.check(r.returncode == 0 and (j.get("burst"), j.get("ring_items"), j.get("drain_ms"),
                                        j.get("forward_mode")) == (8, 128, 1234, "io"),
                 "%s: --burst and --forward-mode over the file, its other fields kept: exit %d %s" % (
                     opts, r.returncode, {k: j.get(k) for k in ("burst", "ring_items", "drain_ms", "forward_mode")}))
    # --check: the options and the file judged as a run judges them (gnio_conf_check() too), nothing
    # started.
    r = run(["--config", good, "--check"])
    ck.check(r.returncode == 0 and "options accepted" in r.stdout and "forwarding" not in r.stdout and not r.json,
             "--check on a good file: exit %d %s %s" % (r.returncode, r.stdout[-200:], r.stderr[-200:]))
    shared = write(d, "shared.yaml", "consumer:\n  state_shared: 99999\n")
    one_line(ck, run(["--config", shared, "--check"]), "gnio-testpmd", "--check, state_shared",
             shared + ":2: consumer.state_shared=99999: at most")
    # A GPU the file names that does not exist: refused once the EAL is up, the file's line named;
    # --gpu over it runs.
    nosuch = write(d, "gpu.yaml", "consumer.name: host\ngpu.name: nosuch\n")
    one_line(ck, run(["--config", nosuch]), "gnio-testpmd", "gpu.name: nosuch",
             nosuch + ":2: gpu.name (--gpu)=nosuch")
    ctl = write(d, "gpuctl.yaml", 'consumer.name: host\ngpu.name: "no\\nsuch"\n')
    one_line(ck, run(["--config", ctl]), "gnio-testpmd", "gpu.name with a newline",
             ctl + ":2: gpu.name (--gpu)=no\\nsuch: no such GPU")
    r = run(["--config", nosuch, "--gpu", "host"])
    ck.check(r.returncode == 0 and r.json.get("consumer") == "host", "--gpu host over the file's gpu.name: exit %d %s"
             % (r.returncode, r.stderr.strip()[-300:]))
    cases, missing = common_refusals(d, "gnio-testpmd")
    cases += [
        ("rx:\n  burst: x\n", [], ['FILE:2: rx.burst (--burst): "x" is not a value of it']),
        ("rx:\n  burst: 0\n", [], ["FILE:2: rx.burst (--burst)=0: must be 1..1024"]),
        ("ports:\n  nb_rxq: 100\n", [], ["FILE:2: ports.nb_rxq (--rxq)=100: out of range 1..64"]),
        ("queue.inline_bytes: 100\n", [], ["FILE:1: queue.inline_bytes (--inline-bytes)=100: must be"]),
        ("consumer.handler: nope\n", [], ["FILE:1: consumer.handler (--forward-mode)=nope: no such handler"]),
        ("queue: {item_pkts: 16}\n", [], ["FILE:1: queue.item_pkts (--item-pkts)=16: must be 32..1024"]),
        ("consumer:\n  state_shared: 99999\n", [], ["FILE:2: consumer.state_shared=99999: at most"]),
    ]
    bad_files(ck, d, run, "gnio-testpmd", cases)
    not_regular(ck, d, run, "gnio-testpmd")
    one_line(ck, run(["--config", missing]), "gnio-testpmd", "no such file",
             "--config=%s: No such file" % missing)


def itch(ck, d):
    feed = os.path.join(d, "feed.pcap")
    subprocess.run([sys.executable, ITCHGEN, "--seed", "11", "--messages", "3000", "--stocks", "10", "--depth", "100",
                    "--pcap", feed, "--book-json", os.path.join(d, "ref.json"), "--bbo-csv", os.path.join(d, "ref.csv")],
                   check=True, capture_output=True, timeout=120)
    eal = ["-l", "0-1"] + eal_mem() + ["--vdev=net_pcap0,rx_pcap=%s,tx_pcap=%s" % (feed, os.path.join(d, "tx.pcap")),
                                       "--"]

    def run(opts, end=("--exit-at-end",), **kw):
        return subprocess.run([ITCH] + eal + list(end) + ["--duration", "3"] + opts, capture_output=True, text=True,
                              **{"timeout": 120, **kw})

    whole = run([])
    ck.check(whole.returncode == 0 and "284 packets" in whole.stdout, "the feed whole: exit %d %s" % (
        whole.returncode, whole.stdout[-300:]))
    # A field gnio-itch has no option for (the library's): the run receives what it says.
    cfg = write(d, "itch.yaml", "rx:\n  max_packets: 50\n  overload: backpressure\nconsumer.name: host\n")
    r = run(["--config", cfg], end=())
    ck.check(r.returncode == 0 and "gnio-itch: 50 packets (" in r.stdout and "received 50 = " in r.stdout,
             "rx.max_packets: 50 from the file: exit %d %s" % (r.returncode, r.stdout[-400:]))
    nosuch = write(d, "gpu.yaml", "rx.max_packets: 50\ngpu.name: nosuch\n")
    one_line(ck, run(["--config", nosuch]), "gnio-itch", "gpu.name: nosuch", nosuch + ":2: gpu.name (--gpu)=nosuch")
    r = run(["--config", nosuch, "--gpu", "host"], end=())
    ck.check(r.returncode == 0 and "gnio-itch: 50 packets (" in r.stdout,
             "--gpu host over the file's gpu.name, its rx.max_packets kept: exit %d %s" % (
                 r.returncode, (r.stdout + r.stderr)[-400:]))
    cases, missing = common_refusals(d, "gnio-itch")
    cases += [
        ("queue.item_pkts: 16\n", [], ["FILE:1: queue.item_pkts (--item-pkts)=16: out of range 32..512"]),
        ("consumer:\n  name: cuda\n", [], ["FILE:2: consumer.name (--consumer)=cuda: host or cuda-kernel"]),
        ("rx.burst: 0\n", [], ["FILE:1: rx.burst=0: must be 1..1024"]),
        ("consumer.handler: io\n", [], ["FILE:1: consumer.handler: gnio-itch sets it itself"]),
        ("ports: {nb_rxq: 2}\n", [], ["FILE:1: ports.nb_rxq: gnio-itch sets it itself"]),
        ("queue.inline_bytes: 896\n", [], ["FILE:1: queue.inline_bytes: gnio-itch sets it itself"]),
    ]
    bad_files(ck, d, run, "gnio-itch", cases)
    not_regular(ck, d, run, "gnio-itch")
    one_line(ck, run(["--config", missing]), "gnio-itch", "no such file", "--config=%s: No such file" % missing)


def infer(ck, d):
    req = os.path.join(d, "req.pcap")
    subprocess.run([sys.executable, INFER_CLIENT, "requests", "--out", req, "--testset", INFER_TESTSET],
                   check=True, capture_output=True, timeout=120)
    eal = ["-l", "0-1"] + eal_mem() + ["--vdev=net_pcap0,rx_pcap=%s,tx_pcap=%s" % (req, os.path.join(d, "ans.pcap")),
                                       "--", "--model", INFER_MODEL, "--duration", "5"]

    def run(opts, **kw):
        return subprocess.run([INFER] + eal + opts, capture_output=True, text=True, **{"timeout": 120, **kw})

    # The file's rx.max_packets (--max-packets) ends the run at 100 of the 359 requests; its rx.burst
    # (the library's field) under gnio-infer's item of 32 requests: the item follows it.
    cfg = write(d, "infer.yaml", "rx:\n  max_packets: 100\n  burst: 64\nconsumer.name: host\n"
                "queue.ring_items: 128\n")
    r = run(["--config", cfg])
    ck.check(r.returncode == 0 and "consumer host" in r.stdout and "gnio-infer: 100 answered, " in r.stdout and
             "received 100 = transmitted 100 + dropped 0" in r.stdout,
             "rx.max_packets: 100 and rx.burst: 64 from the file: exit %d %s" % (
                 r.returncode, (r.stdout + r.stderr)[-400:]))
    # --max-packets over the file's, wherever --config stands; the rest of the file stays.
    for opts in (["--max-packets", "200", "--config", cfg], ["--config=" + cfg, "--max-packets=200"]):
        r = run(opts)
        ck.check(r.returncode == 0 and "received 200 = transmitted 200 + dropped 0" in r.stdout,
                 "%s: --max-packets over the file's rx.max_packets: exit %d %s" % (
                     opts, r.returncode, (r.stdout + r.stderr)[-400:]))
    nosuch = write(d, "gpu.yaml", "rx.max_packets: 100\ngpu.name: nosuch\n")
    one_line(ck, run(["--config", nosuch]), "gnio-infer", "gpu.name: nosuch",
             nosuch + ":2: gpu.name (--gpu)=nosuch")
    r = run(["--config", nosuch, "--gpu", "host"])
    ck.check(r.returncode == 0 and "received 100 = transmitted 100 + dropped 0" in r.stdout,
             "--gpu host over the file's gpu.name, its rx.max_packets kept: exit %d %s" % (
                 r.returncode, (r.stdout + r.stderr)[-400:]))
    cases, missing = common_refusals(d, "gnio-infer")
    cases += [
        ("queue.inline_bytes: 16\n", [], ["FILE:1: queue.inline_bytes (--inline-bytes)=16: out of range 64..1024"]),
        ("rx:\n  max_packets: 0\n", [], ["FILE:2: rx.max_packets (--max-packets)=0: out of range 1.."]),
        ("consumer:\n  name: cuda-kernel\n", [], ["FILE:2: consumer.name (--consumer)=cuda-kernel: for --mode records"]),
        ("consumer.name: nosuch\n", [], ["FILE:1: consumer.name (--consumer)=nosuch"]),
        ("queue.item_pkts: 64\n", ["--mode", "batch"], ["FILE:1: ", "queue.item_pkts (--item-pkts)",
                                                          "a batch is an item of --batch-rows"]),
        ("rx.burst: 0\n", [], ["FILE:1: rx.burst=0: must be 1..1024"]),
        ("consumer.handler: io\n", [], ["FILE:1: consumer.handler: gnio-infer sets it itself"]),
        ("consumer: {kernel: records-gpu}\n", [], ["FILE:1: consumer.kernel: gnio-infer sets it itself"]),
        ("consumer.state_shared: 0\n", [], ["FILE:1: consumer.state_shared: gnio-infer sets it itself"]),
    ]
    bad_files(ck, d, run, "gnio-infer", cases)
    not_regular(ck, d, run, "gnio-infer")
    one_line(ck, run(["--config", missing]), "gnio-infer", "no such file", "--config=%s: No such file" % missing)


def main():
    app = sys.argv[1]
    ck = Checker("config-" + app)
    d = tempfile.mkdtemp(prefix="gnio-config-")
    {"testpmd": testpmd, "itch": itch, "infer": infer}[app](ck, d)
    ck.finish()


if __name__ == "__main__":
    main()
