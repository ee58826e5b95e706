# SPDX-License-Identifier: BSD-3-Clause
"""Signals from a process's first code, for every app that shares apps/common (gnio-testpmd,
gnio-itch, gnio-infer). Issue 54 item 17: the handlers came from a constructor of the executable,
which runs after every shared library's (DPDK's, CUDA's): a SIGINT or SIGTERM in the first
milliseconds (over 10 on a busy machine) killed the process with no summary, and one sent then
to a run whose parent ignored SIGINT was lost, the run forwarding until killed.

 - The handlers are installed before any library's constructor runs: the dynamic loader (its
   LD_DEBUG=files trace) calls the executable's preinit before any library's init.
 - A signal sent right after exec, whatever the time it takes the process to get going: the
   parent blocks it across the exec (it stays pending, the one way a signal sent at once is
   neither lost nor deadly before the first code runs), also with SIGINT ignored as a script's
   `cmd &` leaves it. The run ends at its start with its summary, exit 0, and leaves nothing in
   /dev/hugepages or /var/run/dpdk. (With the handlers in a constructor and nothing unblocked,
   the run forwarded until its --duration.)"""
import glob
import os
import signal
import subprocess
import sys

from gnio_run import BUILD, TESTPMD, Checker, cleanup_prefix, eal_mem

ITCH = os.path.join(BUILD, "apps", "gnio-itch", "gnio-itch")
INFER = os.path.join(BUILD, "apps", "gnio-infer", "gnio-infer")
NULLS = ["--vdev=net_null0", "--vdev=net_null1"]
APPS = [
    (TESTPMD, ["--forward-mode=io", "--duration=60"]),
    (ITCH, ["--orders", "4096", "--levels", "4096", "--max-pending", "1024", "--duration", "60"]),
    (INFER, ["--duration", "60"]),
]


def preinit_first(app):
    """Does the loader call the executable's preinit before any shared library's init?"""
    env = dict(os.environ, LD_DEBUG="files")
    r = subprocess.run([app, "--", "--help"], capture_output=True, text=True, env=env, timeout=60)
    calls = [l.split("calling", 1)[1].strip() for l in r.stderr.splitlines() if "\tcalling " in l]
    return bool(calls) and calls[0] == "preinit: " + app, calls[:3]


def main():
    ck = Checker("start-signals")
    for app, _ in APPS:
        ok, calls = preinit_first(app)
        ck.check(ok, "%s: the loader's first call is not the app's preinit: %s" % (os.path.basename(app), calls))
    for n, (app, opts) in enumerate(APPS):
        name = os.path.basename(app)
        for k, (sig, ignore) in enumerate(((signal.SIGINT, False), (signal.SIGINT, True), (signal.SIGTERM, False))):
            prefix = "gnio-startsig-%d-%d-%d" % (os.getpid(), n, k)

            def pre(sig=sig, ignore=ignore):
                if ignore:
                    signal.signal(signal.SIGINT, signal.SIG_IGN)
                signal.pthread_sigmask(signal.SIG_BLOCK, [sig])

            cmd = [app, "-l", "0-1"] + eal_mem(prefix) + NULLS + ["--"] + opts
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=pre)
            proc.send_signal(sig)
            what = "%s: %s right after exec%s" % (name, signal.Signals(sig).name,
                                                   ", SIGINT ignored by the parent" if ignore else "")
            try:
                out, err = proc.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                out, err = proc.communicate()
                ck.check(False, "%s: still running after 20 s (the signal was never taken)" % what)
                cleanup_prefix(prefix)
                continue
            ck.check(proc.returncode == 0 and "conserved" in out,
                     "%s: exit %d, no summary:\n%s\n%s" % (what, proc.returncode, out[-2000:], err[-2000:]))
            left = glob.glob("/dev/hugepages/%smap_*" % prefix) + glob.glob("/var/run/dpdk/%s" % prefix)
            ck.check(not left, "%s: left behind %s" % (what, left[:3]))
            cleanup_prefix(prefix)
    ck.finish()


if __name__ == "__main__":
    sys.exit(main())
