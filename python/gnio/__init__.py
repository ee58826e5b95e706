# SPDX-License-Identifier: BSD-3-Clause
"""gnio in Python: a layer on libgnio's public API (docs/PYTHON.md).

The configuration names the fields of struct gnio_conf as gnio_conf_set() knows them
("rx.burst", "consumer.name", ...), as a dict (flat, or nested by part: {"rx": {"burst": 32}})
or a Conf. Every error of the library raises gnio.Error, whose str() is the library's one-line
reason.
"""
import atexit
import shlex

from . import _gnio
from ._gnio import Error

__all__ = ["Error", "Conf", "version", "consumers", "handlers", "drop", "is_drop",
           "drop_reason", "DROP_REASONS", "eal_cleanup", "eal_running", "probe"]

version = _gnio.version
consumers = _gnio.consumers
handlers = _gnio.handlers
eal_cleanup = _gnio.eal_cleanup
eal_running = _gnio.eal_running
probe = _gnio.probe

#: The drop reasons' counter names, by reason number (gnio_verdict.h).
DROP_REASONS = [name for name, _ in _gnio.drop_reasons()]
DROP_BIT = _gnio.DROP_BIT


def drop(reason="handler"):
    """The verdict that drops a packet for @p reason (a name of DROP_REASONS, or its number)."""
    if isinstance(reason, str):
        try:
            reason = DROP_REASONS.index(reason)
        except ValueError:
            raise ValueError("%r: not a drop reason (%s)" % (reason, ", ".join(DROP_REASONS))) from None
    if not 0 <= reason < len(DROP_REASONS):
        raise ValueError("drop reason %d: out of range 0..%d" % (reason, len(DROP_REASONS) - 1))
    return DROP_BIT | reason


def is_drop(verdict):
    """Whether a verdict drops its packet."""
    return bool(verdict & DROP_BIT)


def drop_reason(verdict):
    """The counter name of a dropping verdict's reason."""
    r = verdict & ~DROP_BIT
    return DROP_REASONS[r] if r < len(DROP_REASONS) else "consumer_error"


def _text(key, value):
    if isinstance(value, bool):
        raise Error("%s: %r: no field of gnio_conf is a bool" % (key, value))
    if isinstance(value, (int, str)):
        return str(value)
    raise Error("%s: %r: a value is an int or a str" % (key, value))


def _flatten(fields, prefix=""):
    """(key, value) pairs of a dict, nested dicts joined by '.' ({"rx": {"burst": 32}})."""
    out = []
    for k, v in fields.items():
        if not isinstance(k, str):
            raise Error("%r: a key is a field's name" % (k,))
        key = prefix + k
        if isinstance(v, dict):
            out += _flatten(v, key + ".")
        elif v is not None:
            out.append((key, _text(key, v)))
    return out


class Conf:
    """A pipeline's configuration: struct gnio_conf's fields by the names gnio_conf_set() knows.

    Each field is checked by the library when it is set (a bad field or value raises
    gnio.Error naming it); what is set later overrides what was set before.
    """

    def __init__(self, fields=None, **kw):
        self._items = []
        if fields is not None:
            self.update(fields)
        if kw:
            self.update({k.replace("__", "."): v for k, v in kw.items()})

    def set(self, key, value):
        """Set one field ("rx.burst", 32); returns the Conf."""
        text = _text(key, value)
        _gnio.conf_check(key, text)
        self._items.append((key, text))
        return self

    def update(self, fields):
        """Set the fields of a dict (flat or nested by part) or of another Conf."""
        pairs = fields.items() if isinstance(fields, Conf) else _flatten(fields)
        for k, v in pairs:
            self.set(k, v)
        return self

    def items(self):
        """The (key, value) pairs, in the order they are applied."""
        return list(self._items)

    def __repr__(self):
        return "gnio.Conf(%r)" % dict(self._items)


# The EAL leaves hugepage files and a runtime folder behind unless cleaned up.
atexit.register(_gnio.eal_cleanup)
