# SPDX-License-Identifier: BSD-3-Clause
"""The module gnio as built and as installed: one binary on CPython's limited API (the abi3
name), linked to libgnio.so and not to libpython; `meson install --destdir` puts it into the
interpreter's site-packages, where it imports with the installed libgnio.so; the library's names
and verdicts; the configuration's fields checked by the library (gnio_conf_set()), a bad field
or value raising gnio.Error with one line naming it."""
import os
import subprocess
import sys
import tempfile

from gnio_run import BUILD, Checker

import gnio

ck = Checker("python-module")

ext = gnio._gnio.__file__
ck.check(ext.endswith("/gnio/_gnio.abi3.so"), "the extension is the abi3 build: %s" % ext)
ldd = subprocess.run(["ldd", ext], capture_output=True, text=True).stdout
ck.check("libgnio.so.0" in ldd and "libpython" not in ldd, "links libgnio.so, not libpython:\n" + ldd)
ck.check(gnio.version() == os.environ.get("GNIO_VERSION", "?"), "version %s" % gnio.version())
ck.check("host" in gnio.consumers() and "io" in gnio.handlers(), "names: %s %s" % (gnio.consumers(), gnio.handlers()))
ck.check(gnio.DROP_REASONS[:2] == ["ring_full", "malformed"] and gnio.drop("malformed") == 0x8001 and
         gnio.is_drop(gnio.drop()) and not gnio.is_drop(3) and gnio.drop_reason(0x8001) == "malformed",
         "verdict helpers: %s" % gnio.DROP_REASONS)
ck.check(not gnio.eal_running(), "no EAL before a Pipeline")

# The installed module, as a user gets it.
stage = tempfile.mkdtemp(prefix="gnio-py-install-")
r = subprocess.run(["meson", "install", "-C", BUILD, "--no-rebuild", "--quiet", "--destdir", stage],
                   capture_output=True, text=True)
ck.check(r.returncode == 0, "meson install --destdir: %s" % r.stderr[-300:])
site = subprocess.run([sys.executable, "-c", "import sysconfig; print(sysconfig.get_path('platlib'))"],
                      capture_output=True, text=True).stdout.strip()
found = [os.path.join(dp, f) for dp, _, fs in os.walk(stage) for f in fs if f == "_gnio.abi3.so"]
ck.check(len(found) == 1 and found[0] == stage + site + "/gnio/_gnio.abi3.so",
         "installed into the interpreter's site-packages %s: %s" % (site, found))
libdir = [dp for dp, _, fs in os.walk(stage) for f in fs if f == "libgnio.so.0"]
env = dict(os.environ, PYTHONPATH=stage + site, LD_LIBRARY_PATH=":".join(libdir))
r = subprocess.run([sys.executable, "-c", "import gnio, sys; print(gnio.__file__, gnio._gnio.__file__, gnio.version())"],
                   capture_output=True, text=True, env=env, cwd=stage)
ck.check(r.returncode == 0 and r.stdout.split()[:2] == [stage + site + "/gnio/__init__.py", found[0] if found else "?"],
         "the installed copy imports: %s %s" % (r.stdout, r.stderr[-300:]))
for f in ("__init__.pyi", "py.typed"):
    ck.check(os.path.exists(stage + site + "/gnio/" + f), "installed: %s" % f)

# The configuration: the library's names, checked by the library.
flat = gnio.Conf({"rx.burst": 16, "consumer.name": "host"})
nested = gnio.Conf({"rx": {"burst": 16}, "consumer": {"name": "host"}})
ck.check(flat.items() == nested.items() == [("rx.burst", "16"), ("consumer.name", "host")],
         "flat and nested dicts: %s %s" % (flat.items(), nested.items()))
ck.check(gnio.Conf(flat).set("rx.burst", 32).items()[-1] == ("rx.burst", "32"), "set() after, applied after")
for fields, want in (({"rx.bursts": 1}, "rx.bursts: no such field of gnio_conf"),
                     ({"rx": {"burst": "x"}}, 'rx.burst: "x" is not a value of it'),
                     ({"rx.burst": 70000}, 'rx.burst: "70000" is not a value of it'),
                     ({"rx.burst": -1}, 'rx.burst: "-1" is not a value of it'),
                     ({"mem.mode": "vram"}, 'mem.mode: "vram" is not a value of it'),
                     ({"rx.burst": True}, "rx.burst: True: no field of gnio_conf is a bool"),
                     ({"rx.burst": 1.5}, "rx.burst: 1.5: a value is an int or a str")):
    try:
        gnio.Conf(fields)
        ck.check(False, "%s: no error" % fields)
    except gnio.Error as e:
        ck.check(str(e) == want and "\n" not in str(e), "%s: %r (want %r)" % (fields, str(e), want))
ck.finish()
