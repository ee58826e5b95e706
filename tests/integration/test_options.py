# SPDX-License-Identifier: BSD-3-Clause
"""Every bad option value exits 2 with one line (nothing else on stderr) naming the
option and the reason; --mem=gpu on a virtual port that copies packets (net_null copy=1)
is refused cleanly, suggesting --mem=pinned; an unwritable --json is refused before forwarding; an EAL device that
did not become a port is named with the EAL's reason."""
import os
import subprocess

from gnio_run import TESTPMD, Checker, eal_mem

BAD = [
    (["--forward-mode=nope"], "--forward-mode"),
    (["--burst=0"], "--burst"),
    (["--burst=1025"], "--burst"),
    (["--burst=abc"], "--burst"),
    (["--burst=-3"], "--burst"),
    (["--rxq=0"], "--rxq"),
    (["--txq=65"], "--txq"),
    (["--rxd=0"], "--rxd"),
    (["--txd=99999"], "--txd"),
    (["--nb-cores=0"], "--nb-cores"),
    (["--nb-cores=9"], "--nb-cores"),
    (["--stats-period=0"], "--stats-period"),
    (["--total-num-mbufs=10"], "--total-num-mbufs"),
    (["--mbuf-size=12"], "--mbuf-size"),
    (["--eth-peer=0"], "--eth-peer"),
    (["--eth-peer=0,zz:zz"], "--eth-peer"),
    (["--eth-peer=99,02:00:00:00:00:01"], "--eth-peer"),
    (["--txpkts=10"], "--txpkts"),
    (["--mem=vram"], "--mem"),
    (["--gpu="], "--gpu"),
    (["--gpu=nosuchgpu"], "--gpu"),
    (["--consumer=nope"], "--consumer"),
    (["--flush-us=x"], "--flush-us"),
    (["--ring-items=3"], "--ring-items"),
    (["--ring-items=1"], "--ring-items"),
    (["--item-pkts=0"], "--item-pkts"),
    (["--burst=64", "--item-pkts=32"], "--item-pkts"),
    (["--split=2"], "--split"),
    (["--split=64"], "--split"),
    (["--overload=maybe"], "--overload"),
    (["--max-packets=0"], "--max-packets"),
    (["--duration=0"], "--duration"),
    (["--portmask=0"], "--portmask"),
    (["--portmask=4"], "--portmask"),
    (["--portmask=xyz"], "--portmask"),
    (["--json="], "--json"),
    (["--stall-ms=0"], "--stall-ms"),
    (["--slow-consumer-us=0"], "--slow-consumer-us"),
    (["--bogus"], "--bogus"),
    (["--burst"], "--burst"),
    (["stray"], "stray"),
    (["--consumer=host", "--forward-mode=txonly", "--txpkts=3000"], "--txpkts"),
    (["--completion=sometimes"], "--completion"),
    (["--completion=lcore"], "--completion=lcore"),
    (["--rx-pps=0"], "--rx-pps"),
    (["--rx-pps=fast"], "--rx-pps"),
    (["--prefill=20"], "--prefill"),
    (["--prefill=4000"], "--prefill"),
    (["--eth-peer=7,02:00:00:00:00:01"], "--eth-peer: port 7"),
    (["-i"], "--duration"),
    (["--json=/nonexistent/dir/x.json"], "--json=/nonexistent/dir/x.json"),
    (["--json=/"], "--json=/"),
    (["--nb-cores=4"], "--nb-cores=4"),
    (["--split=64", "--max-packets=10"], "--split"),
    (["--drain-ms=x"], "--drain-ms"),
    (["--cuda-warps=0"], "--cuda-warps"),
    (["--cuda-warps=65"], "--cuda-warps"),
    (["--cuda-backoff-ns=-1"], "--cuda-backoff-ns"),
    (["--cuda-trace=1"], "--cuda-trace"),
    (["--inline-bytes=64"], "--inline-bytes"),
    (["--inline-bytes=100"], "--inline-bytes"),
    (["--inline-bytes=1024"], "--inline-bytes"),
    (["--inline-bytes=x"], "--inline-bytes"),
    # The latency queue: only on consumers that serve it, and the CPU copies the first bytes.
    (["--inline-bytes=128", "--consumer=cuda-burst"], "--consumer"),
    (["--inline-bytes=128", "--mem=gpu"], "--mem=pinned"),
    (["--inline-bytes=128", "--forward-mode=txonly", "--txpkts=200"], "--inline-bytes=128"),
]
# On ports that copy packets (net_null copy=1 writes each one): GPU memory is refused.
BAD_COPY = [
    (["--mem=gpu"], "--mem=pinned"),
    (["--mem=gpu", "--forward-mode=macswap"], "copy=1"),
]


def main():
    ck = Checker("options")
    base = [TESTPMD, "-l", "0-1"] + eal_mem() + ["--vdev=net_null0", "--vdev=net_null1", "--"]
    copy = [TESTPMD, "-l", "0-1"] + eal_mem() + ["--vdev=net_null0,copy=1", "--vdev=net_null1,copy=1", "--"]
    for args, needle in [(base + a, n) for a, n in BAD] + [(copy + a, n) for a, n in BAD_COPY]:
        r = subprocess.run(args + ["--duration=1"], capture_output=True, text=True, timeout=60)
        lines = r.stderr.splitlines()
        ck.check(r.returncode == 2, "%s: exit %d, expected 2 (stderr: %s)" % (args, r.returncode, r.stderr.strip()))
        ck.check(len(lines) == 1 and lines[0].startswith("gnio-testpmd: ") and needle in lines[0],
                 "%s: want one line naming %s, got %r" % (args, needle, lines))
        ck.check("forwarding" not in r.stdout, "%s: refused before forwarding:\n%s" % (args, r.stdout))
    # A device the EAL could not create is named, with the EAL's own reason.
    r = subprocess.run([TESTPMD, "-l", "0-1"] + eal_mem() + ["--vdev=net_pcap0,rx_pcap=/nonexistent.pcap", "--",
                       "--duration=1"], capture_output=True, text=True, timeout=60)
    last = r.stderr.strip().splitlines()[-1:] or [""]
    ck.check(r.returncode == 2 and "--vdev=net_pcap0,rx_pcap=/nonexistent.pcap did not become a port" in last[0]
             and "/nonexistent.pcap: No such file" in last[0], "failed vdev: exit %d, %r" % (r.returncode, last))
    # gnio-bench's output folder likewise: refused before any run.
    bench = os.path.join(os.environ.get("GNIO_SOURCE", "."), "apps", "gnio-bench", "gnio-bench")
    r = subprocess.run(["/usr/bin/python3", bench, "--quick", "--out", "/proc/gnio-no-such-dir"],
                       capture_output=True, text=True, timeout=60)
    ck.check(r.returncode == 2 and r.stderr.startswith("gnio-bench: --out=/proc/gnio-no-such-dir: cannot write")
             and "section" not in r.stdout, "gnio-bench --out unwritable: exit %d %r" % (r.returncode, r.stderr))
    r = subprocess.run(["/usr/bin/python3", bench, "--full", "--lcores-counts", "4,0"],
                       capture_output=True, text=True, timeout=60)
    ck.check(r.returncode == 2 and r.stderr == "gnio-bench: --lcores-counts: 0 out of range 1..127\n"
             and "section" not in r.stdout, "gnio-bench --lcores-counts 4,0: exit %d %r" % (r.returncode, r.stderr))
    r = subprocess.run(["/usr/bin/python3", bench, "--full", "--mbuf-size", "128"],
                       capture_output=True, text=True, timeout=60)
    ck.check(r.returncode == 2 and r.stderr == "gnio-bench: --mbuf-size: 128 out of range 192..65535\n"
             and "section" not in r.stdout, "gnio-bench --mbuf-size 128: exit %d %r" % (r.returncode, r.stderr))
    # --full fixes each point's engine: a --mode there would be silently ignored, so it is refused.
    r = subprocess.run(["/usr/bin/python3", bench, "--full", "--mode", "csum"],
                       capture_output=True, text=True, timeout=60)
    ck.check(r.returncode == 2 and r.stderr.startswith("gnio-bench: --mode: not with --full")
             and r.stderr.count("\n") == 1 and "section" not in r.stdout,
             "gnio-bench --full --mode csum: exit %d %r" % (r.returncode, r.stderr))
    r = subprocess.run([TESTPMD, "--help"], capture_output=True, text=True, timeout=30)
    ck.check(r.returncode == 0 and "--forward-mode" in r.stdout, "--help")
    ck.finish()


if __name__ == "__main__":
    main()
