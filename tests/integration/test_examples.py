#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""gnio as a library, the way a user gets it: install the build (meson install
--destdir into the build tree; PKG_CONFIG_PATH pointed at the stage, as docs/LIBRARY.md says: the
.pc files find their prefix from where they are), copy examples/ out of the source tree, and build each example with
nothing but pkg-config (libgnio, libgnio-device: the GPU architectures, the link's -lstdc++)
and the compilers; the device headers refuse a GPU below sm_80 in words; every
public header compiles on its own in C and C++; the version macro, the
library and the .pc file agree; a static link (as gnio.h documents) works.
Then run them on net_pcap ports, with pcaps written here:

 - cpu_filter forwards exactly the UDP packets to its port, byte for byte, and
   drops the rest as its own;
 - udp_top on the host consumer: final per-port counts equal the pcap's, every
   event names the busiest ports of exactly the packets before it, the packets
   go through unchanged; the same on the flagged lines (--inline-bytes 128);
 - item_kernel without a CUDA GPU refuses in one line and exits 2.

With --gpu (GPU suite; exits 77 without a CUDA GPU): udp_top on every CUDA
consumer (persistent, per-burst, graph, staged, and persistent on the flagged
lines of --inline-bytes) gives the host consumer's counts and output bit for bit, and
item_kernel (a user persistent kernel on the per-item API) sends what
macswap would, byte for byte, every burst released once.

GNIO_EXAMPLES=DIR runs examples already built there (the GPU machine's bundle)
instead of building them; --build-to DIR only builds them there (gpu-bundle);
GNIO_EXAMPLES_WRAP="compute-sanitizer ..." runs each example under that command."""
import glob
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

from gnio_run import Checker, eal_mem

BUILD = os.path.abspath(os.environ["GNIO_BUILD"])
SOURCE = os.environ.get("GNIO_SOURCE", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
GPU = "--gpu" in sys.argv
ck = Checker("examples" + (" (GPU)" if GPU else ""))
if GPU and subprocess.run([os.path.join(BUILD, "tests/gpu/test_cuda"), "--probe"],
                          capture_output=True).returncode == 77:
    print("no CUDA GPU: skipped")
    sys.exit(77)
tmp = tempfile.mkdtemp(prefix="gnio-examples-")


def sh(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        print("command: %s\n%s%s" % (" ".join(cmd), r.stdout[-3000:], r.stderr[-3000:]))
    return r


# ---- pcaps, without scapy (the GPU machine has none) ----

def csum16(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def frame(i, proto, dport, payload):
    l4 = struct.pack("!HHHH", 1024 + i % 7, dport, 8 + len(payload), 0) + payload if proto == 17 else \
        struct.pack("!HHIIBBHHH", 1024, dport, i, 0, 0x50, 0x18, 1024, 0, 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), i & 0xffff, 0, 64, proto, 0,
                     bytes([10, 0, 0, 1]), bytes([10, 0, 1, i % 200 + 1]))
    ip = ip[:10] + struct.pack("!H", csum16(ip)) + ip[12:]
    eth = bytes([2, 0, 0, 0, 0, 2]) + bytes([2, 0, 0, 0, 1, i % 256]) + b"\x08\x00"
    return eth + ip + l4


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for k, fr in enumerate(frames):
            f.write(struct.pack("<IIII", k, 0, len(fr), len(fr)) + fr)


def read_pcap(path):
    frames = []
    with open(path, "rb") as f:
        hdr = f.read(24)
        magic = struct.unpack("<I", hdr[:4])[0]
        if magic not in (0xa1b2c3d4, 0xa1b23c4d):
            raise SystemExit("FAIL: %s is not a little-endian pcap" % path)
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                break
            _, _, incl, _ = struct.unpack("<IIII", rec)
            frames.append(f.read(incl))
    return frames


N = 1000
PORTS = [5000, 5001, 53, 5000, 9000, 5000, 53, 5001]
frames, udp_dports = [], []
for i in range(N):
    if i % 7 == 0:
        frames.append(frame(i, 6, 80, bytes([i % 256]) * (i % 40)))
        udp_dports.append(None)
    else:
        d = PORTS[i % len(PORTS)] if i % 11 else 7000 + i % 3
        frames.append(frame(i, 17, d, bytes([i % 256]) * (i % 60 + 1)))
        udp_dports.append(d)
IN = os.path.join(tmp, "in.pcap")
write_pcap(IN, frames)


def top(counts):
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:4]


# ---- build (unless given) ----

def build():
    # The install: a DESTDIR inside the build tree (kept, to look at); the examples: a copy in /tmp.
    stage = os.path.join(BUILD, "examples-install")
    shutil.rmtree(stage, ignore_errors=True)
    r = sh(["meson", "install", "-C", BUILD, "--no-rebuild", "--quiet", "--destdir", stage])
    ck.check(r.returncode == 0, "meson install --destdir")
    pcs = glob.glob(stage + "/**/pkgconfig/libgnio.pc", recursive=True)
    if not pcs:
        raise SystemExit("FAIL: no libgnio.pc installed")
    # The staged install as docs/LIBRARY.md says to use it: PKG_CONFIG_PATH pointed at the stage, the
    # .pc files as installed (they find their prefix from where they are).
    if not open(pcs[0]).read().startswith("prefix=${pcfiledir}/"):
        raise SystemExit("FAIL: the installed libgnio.pc is not relocatable (this build directory was "
                         "set up before pkgconfig.relocatable became gnio's default: meson configure %s "
                         "-Dpkgconfig.relocatable=true)" % BUILD)
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.dirname(pcs[0]))

    def pc(*args):
        r = sh(["pkg-config"] + list(args), env=env)
        ck.check(r.returncode == 0, "pkg-config %s" % " ".join(args))
        return r.stdout.split()

    # The gpudev plugins go where libgnio.pc says (pmddir), never outside the prefix.
    prefix = os.path.realpath(pc("--variable=prefix", "libgnio")[0])
    pmd_dir = os.path.realpath(pc("--variable=pmddir", "libgnio")[0])
    for d in ("host", "cuda"):
        ck.check(pmd_dir.startswith(prefix + "/") and pmd_dir.startswith(stage + "/") and
                 os.path.exists(pmd_dir + "/librte_gpu_gnio_%s.so" % d),
                 "librte_gpu_gnio_%s.so installed into pmddir %s, under the prefix %s" % (d, pmd_dir, prefix))

    cflags, libs, dcflags = pc("--cflags", "libgnio"), pc("--libs", "libgnio"), pc("--cflags", "libgnio-device")
    dlibs = pc("--libs", "libgnio-device")
    version = pc("--modversion", "libgnio")[0]
    cuda = "-lcudart" in libs
    nvcc = None
    if cuda:
        cudadir = [a[2:] for a in libs if a.startswith("-L") and "cuda" in a][0]
        nvcc = os.path.join(os.path.dirname(cudadir), "bin", "nvcc")
    print("installed gnio %s under %s; CUDA: %s" % (version, stage, nvcc or "no (built without)"))
    src = os.path.join(tmp, "src")
    shutil.copytree(os.path.join(SOURCE, "examples"), src)
    incdir = [a[2:] for a in cflags if a.startswith("-I") and a.startswith("-I" + stage)][0]

    # Every public header on its own, in C and in C++ (device headers: host-side ones only).
    heads = sorted(glob.glob(incdir + "/gnio/*.h")) + [incdir + "/gnio/device/" + h for h in
                                                        ("gnio_events.h", "gnio_cuda_launch.h", "gnio_shm.h")]
    # ... with the installed library's flags, and with the build tree's (meson-uninstalled).
    r = sh(["pkg-config", "--cflags", "libgnio"],
           env=dict(os.environ, PKG_CONFIG_PATH=os.path.join(BUILD, "meson-uninstalled")))
    ck.check(r.returncode == 0, "pkg-config finds libgnio in build/meson-uninstalled")
    for flags, where in ((cflags, "installed"), (r.stdout.split(), "uninstalled")):
        for h in heads:
            rel = os.path.relpath(h, incdir)
            for lang, comp in (("c", "cc"), ("c++", "c++")):
                t = os.path.join(tmp, "h." + ("c" if lang == "c" else "cc"))
                open(t, "w").write("#include <%s>\nint gnio_header_test;\n" % rel)
                r2 = sh([comp, "-x", lang, "-fsyntax-only", "-Wall", "-Wextra", "-Werror", t] + flags)
                ck.check(r2.returncode == 0, "%s compiles alone as %s (%s)" % (rel, lang, where))
    if nvcc:
        for h in ("gnio_kernels.cuh", "gnio_item.cuh", "gnio_csum_warp.cuh", "gnio_batch.cuh"):
            t = os.path.join(tmp, "h.cu")
            open(t, "w").write("#include <gnio/device/%s>\n" % h)
            r = sh([nvcc, "-std=c++17", "-c", "-o", os.devnull, t] + dcflags)
            ck.check(r.returncode == 0, "gnio/device/%s compiles alone with nvcc" % h)
        # Below compute capability 8.0 the device headers stop the build, saying what they need
        # (it was nvcc's "identifier __reduce_or_sync is undefined").
        t = os.path.join(tmp, "h.cu")
        open(t, "w").write("#include <gnio/device/gnio_kernels.cuh>\n")
        r = subprocess.run([nvcc, "-std=c++17", "-c", "-o", os.devnull, t, "-arch=sm_75"] +
                           [f for f in dcflags if f.startswith("-I")], capture_output=True, text=True)
        ck.check(r.returncode != 0 and "compute capability 8.0" in r.stderr and "sm_80" in r.stderr,
                 "gnio_kernels.cuh for sm_75: refused naming sm_80:\n%s" % r.stderr[-1500:])

    # The version three ways; and a static link as gnio.h documents it.
    v = os.path.join(tmp, "ver.c")
    open(v, "w").write('#include <stdio.h>\n#include <string.h>\n#include <gnio/gnio.h>\n'
                       'int main(void) { printf("%s %s\\n", GNIO_VERSION_STRING, gnio_version());'
                       ' return strcmp(GNIO_VERSION_STRING, gnio_version()) != 0; }\n')
    r = sh(["cc", "-o", os.path.join(tmp, "ver"), v] + cflags + libs)
    ck.check(r.returncode == 0, "a program links with pkg-config --libs libgnio")
    r = sh([os.path.join(tmp, "ver")])
    ck.check(r.returncode == 0 and r.stdout.split() == [version, version],
             "GNIO_VERSION_STRING, gnio_version() and the .pc say %s: %s" % (version, r.stdout.strip()))
    r = sh(["cc", "-O2", "-o", os.path.join(src, "cpu_filter", "cpu_filter_static"),
            os.path.join(src, "cpu_filter", "cpu_filter.c")] + cflags +
           pc("--libs", "libgnio-static"))
    ck.check(r.returncode == 0, "cpu_filter links with the static library")
    r = sh(["ldd", os.path.join(src, "cpu_filter", "cpu_filter_static")])
    ck.check(r.returncode == 0 and "libgnio" not in r.stdout, "the static cpu_filter needs no libgnio.so")

    strict = ["-O2", "-Wall", "-Wextra", "-Werror"]
    # The library guide's shortest program (docs/LIBRARY.md, "A program"), as printed there.
    guide = open(os.path.join(SOURCE, "docs", "LIBRARY.md")).read()
    code = guide.split("\n## A program\n", 1)[1].split("```c\n", 1)[1].split("```", 1)[0]
    os.makedirs(os.path.join(src, "udp_only"))
    open(os.path.join(src, "udp_only", "udp_only.c"), "w").write(code)
    r = sh(["cc"] + strict + ["-o", os.path.join(src, "udp_only", "udp_only"),
                              os.path.join(src, "udp_only", "udp_only.c")] + cflags + libs)
    ck.check(r.returncode == 0, "docs/LIBRARY.md's program builds as printed")
    r = sh(["cc"] + strict + ["-o", os.path.join(src, "cpu_filter", "cpu_filter"),
                              os.path.join(src, "cpu_filter", "cpu_filter.c")] + cflags + libs)
    ck.check(r.returncode == 0, "cpu_filter builds with cc and pkg-config alone")
    if nvcc:
        for ex, cu, c in (("udp_top", "udp_top_handler.cu", "udp_top.c"),
                          ("item_kernel", "item_macswap.cu", "item_kernel.c")):
            d = os.path.join(src, ex)
            o = os.path.join(d, cu.replace(".cu", ".o"))
            # (The GPU architectures and the link's -lstdc++: what pkg-config gives, nothing more.)
            r = sh([nvcc, "-std=c++17", "-O2", "-Xcompiler", "-fPIC,-Wall,-Werror",
                    "-c", "-o", o, os.path.join(d, cu)] + dcflags)
            ck.check(r.returncode == 0, "%s: nvcc builds %s with pkg-config's flags alone" % (ex, cu))
            r = sh(["cc"] + strict + ["-o", os.path.join(d, ex), os.path.join(d, c), o] + cflags + libs +
                   dlibs)
            ck.check(r.returncode == 0, "%s builds with cc and pkg-config alone" % ex)
    return src, os.path.dirname(os.path.dirname(pcs[0])), cuda


if "--build-to" in sys.argv:
    dest = sys.argv[sys.argv.index("--build-to") + 1]
    src, _, _ = build()
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(src, dest)
    shutil.rmtree(tmp, ignore_errors=True)
    ck.finish()
if os.environ.get("GNIO_EXAMPLES"):
    src, libdir, cuda = os.environ["GNIO_EXAMPLES"], None, True
else:
    src, libdir, cuda = build()
run_env = dict(os.environ)
if libdir:
    run_env["LD_LIBRARY_PATH"] = libdir + ":" + os.environ.get("LD_LIBRARY_PATH", "")
extra = os.environ.get("GNIO_EAL_EXTRA", "").split()
# GNIO_EXAMPLES_WRAP: a command each example runs under (compute-sanitizer on the GPU machine).
wrap = os.environ.get("GNIO_EXAMPLES_WRAP", "").split()


def run(ex, args, out, lcores="0-1", binary=None, timeout=90):
    cmd = wrap + [binary or os.path.join(src, ex, ex), "-l", lcores] + eal_mem() + extra + \
        ["--vdev=net_pcap0,rx_pcap=%s,tx_pcap=%s" % (IN, out), "--"] + args
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=run_env)
    print("$ %s -> exit %d\n%s" % (" ".join(cmd[:1] + cmd[-len(args) - 1:]), r.returncode,
                                   "\n".join(r.stdout.splitlines()[-6:])))
    return r


def check_udp_top(r, out, cons, ordered_events):
    ck.check(r.returncode == 0, "udp_top %s: exit 0 (%d): %s" % (cons, r.returncode, r.stderr[-400:]))
    counts = {}
    for d in udp_dports:
        if d is not None:
            counts[d] = counts.get(d, 0) + 1
    got = {}
    events = []
    for line in r.stdout.splitlines():
        w = line.split()
        if line.startswith("udp_top: port "):
            got[int(w[2].rstrip(":"))] = int(w[3])
        elif line.startswith("udp_top: event "):
            events.append((int(w[4]), [tuple(map(int, x.split(":"))) for x in w[6:]]))
    ck.check(got == counts, "udp_top %s: per-port counts equal the pcap's (%s)" % (cons, sorted(got.items())[:3]))
    nudp = sum(counts.values())
    ck.check(sorted(t for t, _ in events) == list(range(200, nudp + 1, 200)),
             "udp_top %s: one event each 200 UDP packets (%s)" % (cons, [t for t, _ in events]))
    if ordered_events:
        for total, tops in events:
            pre = {}
            for d in [d for d in udp_dports if d is not None][:total]:
                pre[d] = pre.get(d, 0) + 1
            want = top(pre) + [(0, 0)] * (4 - len(top(pre)))
            ck.check(tops == want, "udp_top %s: event after %d: %s, want %s" % (cons, total, tops, want))
    ck.check(read_pcap(out) == frames, "udp_top %s: every packet out unchanged, in order" % cons)
    ck.check("conserved; pools full; events all drained" in r.stdout, "udp_top %s: end-of-run check" % cons)


if not GPU:
    out = os.path.join(tmp, "filter.pcap")
    r = run("cpu_filter", ["--udp-port", "5000", "--max-packets", str(N)], out)
    want = [f for f, d in zip(frames, udp_dports) if d == 5000]
    ck.check(r.returncode == 0, "cpu_filter: exit 0 (%d): %s" % (r.returncode, r.stderr[-400:]))
    ck.check("forwarded %d, dropped %d" % (len(want), N - len(want)) in r.stdout,
             "cpu_filter: forwarded %d, dropped %d" % (len(want), N - len(want)))
    ck.check(read_pcap(out) == want, "cpu_filter: exactly the UDP 5000 packets out, byte for byte")
    ck.check("received %d = transmitted %d + dropped %d: conserved; pools full" %
             (N, len(want), N - len(want)) in r.stdout, "cpu_filter: end-of-run check")
    if libdir:
        r = run("cpu_filter", ["--udp-port", "5000", "--max-packets", str(N)], out,
                binary=os.path.join(src, "cpu_filter", "cpu_filter_static"))
        ck.check(r.returncode == 0 and read_pcap(out) == want, "the static cpu_filter does the same")
    if libdir:
        r = run("udp_only", [], out)
        nudp = sum(1 for d in udp_dports if d is not None)
        ck.check(r.returncode == 0 and read_pcap(out) == [f for f, d in zip(frames, udp_dports) if d],
                 "docs/LIBRARY.md's program forwards the %d UDP packets and nothing else (exit %d)" %
                 (nudp, r.returncode))
    r = run("cpu_filter", ["--udp-port"], out)
    ck.check(r.returncode == 2, "cpu_filter: a bad option exits 2")
    if cuda:
        out = os.path.join(tmp, "top.pcap")
        check_udp_top(run("udp_top", ["--consumer", "host", "--max-packets", str(N), "--every", "200",
                                      "--period-ms", "0"], out), out, "host", True)
        # The same user handler on the latency queue (flagged lines), host consumer.
        check_udp_top(run("udp_top", ["--consumer", "host", "--max-packets", str(N), "--every", "200",
                                      "--period-ms", "0", "--inline-bytes", "128"], out), out, "host:lines", True)
        r = run("udp_top", ["--inline-bytes", "100"], out)
        ck.check(r.returncode != 0 and "inline" in r.stderr, "udp_top --inline-bytes 100: refused (%d: %s)" %
                 (r.returncode, r.stderr.strip().splitlines()[-1:]))
        r = run("item_kernel", ["--max-packets", str(N)], os.path.join(tmp, "ik.pcap"))
        errs = r.stderr.strip().splitlines()
        ck.check(r.returncode == 2 and "need a CUDA GPU" in r.stderr,
                 "item_kernel without a CUDA GPU: exit 2, says so (%d: %s)" % (r.returncode, errs[-1:]))
    else:
        print("gnio built without CUDA: udp_top and item_kernel not built")
else:
    host_out = os.path.join(tmp, "top-host.pcap")
    check_udp_top(run("udp_top", ["--consumer", "host", "--max-packets", str(N), "--every", "200",
                                  "--period-ms", "0"], host_out, lcores="0-3"), host_out, "host", True)
    for cons in ("cuda", "cuda-burst", "cuda-graph", "cuda-staged", "cuda:lines"):
        out = os.path.join(tmp, "top-%s.pcap" % cons.replace(":", "-"))
        lines = ["--inline-bytes", "128"] if cons.endswith(":lines") else []
        # On the GPU warps count concurrently: an event's totals are exact, its order a snapshot.
        check_udp_top(run("udp_top", ["--consumer", cons.split(":")[0], "--max-packets", str(N), "--every", "200",
                                      "--period-ms", "0"] + lines, out, lcores="0-3"), out, cons, False)
    out = os.path.join(tmp, "ik.pcap")
    r = run("item_kernel", ["--max-packets", str(N)], out, lcores="0-3")
    want = [f[6:12] + f[0:6] + f[12:] for f in frames]
    ck.check(r.returncode == 0, "item_kernel: exit 0 (%d): %s" % (r.returncode, r.stderr[-400:]))
    ck.check("swapped %d packets" % N in r.stdout, "item_kernel: the kernel counted %d packets" % N)
    ck.check("conserved; pools full; items each once" in r.stdout, "item_kernel: end-of-run check")
    m = re.search(r"swapped \d+ packets in (\d+) bursts", r.stdout)
    m2 = re.search(r"items each once \(kernel (\d+), completed (\d+)\)", r.stdout)
    ck.check(m is not None and m2 is not None and int(m.group(1)) > 0 and
             m.group(1) == m2.group(1) == m2.group(2),
             "item_kernel: the bursts it counted = items gnio counted it released = items completed")
    ck.check(read_pcap(out) == want, "item_kernel: macswap's output byte for byte, in order")
    # --shared: 32 warps on the one queue, taking ready items together: the same, each item once.
    out = os.path.join(tmp, "ik-shared.pcap")
    r = run("item_kernel", ["--max-packets", str(N), "--shared"], out, lcores="0-3")
    m = re.search(r"swapped (\d+) packets in (\d+) bursts", r.stdout)
    m2 = re.search(r"items each once \(kernel (\d+), completed (\d+)\)", r.stdout)
    ck.check(r.returncode == 0 and "conserved; pools full; items each once" in r.stdout and m is not None and
             m2 is not None and int(m.group(1)) == N and m.group(2) == m2.group(1) == m2.group(2),
             "item_kernel --shared: %d packets, each item once (exit %d: %s)" % (N, r.returncode,
                                                                               r.stderr[-300:]))
    ck.check(read_pcap(out) == want, "item_kernel --shared: macswap's output byte for byte, in order")
shutil.rmtree(tmp, ignore_errors=True)
ck.finish()
