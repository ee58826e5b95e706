# SPDX-License-Identifier: BSD-3-Clause
"""devtools/check-device-verified on a repository made here: the newest "GPU suite passed"
row of bench/results/INDEX.md is the base; a WARNING names every device source changed since
(a .cu file, a header a .cu file includes, a file of drivers/consumer/cuda/) and no other file;
nothing is printed when no device source changed; no index, no such row, or a commit not in
the clone are said; the exit status is 0 in each case (2 for a bad argument).

    test_check_device_verified.py PATH-TO-check-device-verified
"""
import os
import subprocess
import sys
import tempfile

from gnio_run import Checker

HEAD = "| date | machine | commit | command | what it showed | superseded by |\n|---|---|---|---|---|---|\n"


def git(repo, *args):
    return subprocess.run(["git", "-C", repo] + list(args), check=True, capture_output=True,
                          text=True).stdout.strip()


def write(repo, path, text):
    os.makedirs(os.path.dirname(os.path.join(repo, path)), exist_ok=True)
    with open(os.path.join(repo, path), "w") as f:
        f.write(text)


def commit(repo, files, msg):
    for path, text in files.items():
        write(repo, path, text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", msg)
    return git(repo, "rev-parse", "HEAD")


def index(rows):
    return "# Results\n\n" + HEAD + "".join("| %s | H200 | `%s` | `devtools/gpu-session tests` | %s | |\n" % r
                                            for r in rows)


def main():
    if len(sys.argv) != 2:
        print("usage: test_check_device_verified.py PATH-TO-check-device-verified", file=sys.stderr)
        sys.exit(2)
    tool = os.path.abspath(sys.argv[1])
    ck = Checker("check-device-verified")

    def run(repo, *args):
        r = subprocess.run([sys.executable, tool, repo] + list(args), capture_output=True, text=True, timeout=60)
        return r.returncode, r.stdout + r.stderr

    repo = tempfile.mkdtemp(prefix="gnio-cdv-")
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "test@example.com")
    git(repo, "config", "user.name", "test")
    # No index at all: said, exit 0.
    base = commit(repo, {
        "apps/app/kern.cu": '#include "book.h"\n__global__ void k(void) {}\n',
        "apps/app/book.h": '#include "entry.h"\nstatic int book;\n',
        "apps/app/entry.h": "struct entry { int a; };\n",
        "apps/app/host.c": "int main(void) { return 0; }\n",
        "apps/app/host.h": "int host;\n",
        "drivers/consumer/cuda/rt.c": "int rt;\n",
        "lib/core.c": "int core;\n",
    }, "base")
    rc, out = run(repo)
    ck.check(rc == 0 and "no bench/results/INDEX.md" in out, "no index: exit %d, %r" % (rc, out))
    # An index without a pass: said.
    commit(repo, {"bench/results/INDEX.md": index([("2026-12-01", base[:7], "GPU suite FAILED at " + base[:7])])},
           "index, a failed run")
    rc, out = run(repo)
    ck.check(rc == 0 and "no row" in out and "WARNING" not in out, "no pass row: exit %d, %r" % (rc, out))
    # The suite passed at base; since then only the index changed: nothing printed.
    commit(repo, {"bench/results/INDEX.md": index([("2026-12-01", base[:7], "GPU suite FAILED at x"),
                                                   ("2026-12-02", base[:7], "**GPU suite passed** at " + base[:7])])},
           "index, a pass")
    rc, out = run(repo)
    ck.check(rc == 0 and out == "", "only the index changed: exit %d, %r" % (rc, out))
    # Host files changed (a C file, a header no .cu file includes, the library): nothing printed.
    commit(repo, {"apps/app/host.c": "int main(void) { return 1; }\n", "apps/app/host.h": "int host2;\n",
                  "lib/core.c": "int core2;\n"}, "host only")
    rc, out = run(repo)
    ck.check(rc == 0 and out == "", "host files changed: exit %d, %r" % (rc, out))
    # A header included by a .cu file (through another), a driver file of the CUDA consumer and
    # a new .cuh: each named, the host files not.
    commit(repo, {"apps/app/entry.h": "struct entry { int a, b; };\n", "drivers/consumer/cuda/rt.c": "int rt2;\n",
                  "include/gnio/device/new.cuh": "int d;\n"}, "device")
    rc, out = run(repo)
    named = [ln.split()[-1] for ln in out.splitlines() if ln.startswith("check-device-verified:   ")]
    ck.check(rc == 0 and "WARNING" in out and base[:7] in out, "device files changed: exit %d, %r" % (rc, out))
    ck.check(sorted(named) == ["apps/app/entry.h", "drivers/consumer/cuda/rt.c", "include/gnio/device/new.cuh"],
             "named %r" % named)
    # The .cu file itself, and a pass recorded at an older commit does not hide it.
    commit(repo, {"apps/app/kern.cu": '#include "book.h"\n__global__ void k2(void) {}\n'}, "kernel")
    rc, out = run(repo)
    ck.check("apps/app/kern.cu" in out and "apps/app/host.c" not in out, "the .cu file: %r" % out)
    # A newer pass at HEAD: nothing printed again.
    head = git(repo, "rev-parse", "HEAD")
    commit(repo, {"bench/results/INDEX.md": index([("2026-12-02", base[:7], "GPU suite passed at " + base[:7]),
                                                   ("2026-12-03", head[:10], "GPU suite passed at " + head[:10])])},
           "index, a newer pass")
    rc, out = run(repo)
    ck.check(rc == 0 and out == "", "passed at the last device change: exit %d, %r" % (rc, out))
    # The newest pass names a commit this clone does not have: said, exit 0.
    commit(repo, {"bench/results/INDEX.md": index([("2026-12-09", "0123abcd", "GPU suite passed at 0123abcd")])},
           "index, an unknown commit")
    rc, out = run(repo)
    ck.check(rc == 0 and "0123abcd" in out and "not in this clone" in out, "unknown commit: exit %d, %r" % (rc, out))
    rc, out = run(repo, "extra")
    ck.check(rc == 2, "two arguments: exit %d" % rc)
    ck.finish()


if __name__ == "__main__":
    main()
