# SPDX-License-Identifier: BSD-3-Clause
"""gnio in Python: a layer on libgnio's public API (docs/PYTHON.md).

    import gnio
    with gnio.Pipeline(["-l", "0-1", "--no-huge", "--vdev=net_null0"],
                       {"consumer.name": "host", "rx.max_packets": 1000}) as p:
        p.wait()
    print(p.stats()["total"])

A Pipeline is made from the EAL's arguments (the first one of a process starts the EAL,
which is cleaned up when the interpreter exits) and a configuration naming the fields of
struct gnio_conf as gnio_conf_set() knows them ("rx.burst", "consumer.name", ...), as a
dict (flat, or nested by part: {"rx": {"burst": 32}}) or a Conf. Every error of the library
raises gnio.Error, whose str() is the library's one-line reason.
"""
import atexit
import os
import shlex
import time

from . import _gnio
from ._gnio import Error

__all__ = ["Error", "Conf", "Pipeline", "Handler", "BatchHandler", "Batch", "Tensor", "Events",
           "batch_counts", "version", "consumers", "handlers", "drop", "is_drop",
           "drop_reason", "DROP_REASONS", "eal_cleanup", "eal_running", "probe", "stop_on_signals", "load_library"]

version = _gnio.version
consumers = _gnio.consumers
handlers = _gnio.handlers
eal_cleanup = _gnio.eal_cleanup
eal_running = _gnio.eal_running
probe = _gnio.probe
load_library = _gnio.load_library
Batch = _gnio.Batch
Tensor = _gnio.Tensor
batch_counts = _gnio.batch_counts

#: The drop reasons' counter names, by reason number (gnio_verdict.h).
DROP_REASONS = [name for name, _ in _gnio.drop_reasons()]
DROP_BIT = _gnio.DROP_BIT
#: Where gnio's installed data is (the digits model of gnio-infer: DATADIR/digits-mlp.bin).
DATADIR = _gnio.DATADIR


def stop_on_signals(signals=None):
    """Make SIGTERM and SIGHUP (or the signals given) raise KeyboardInterrupt in the main thread,
    as Ctrl-C does: a `with gnio.Pipeline(...)` block then stops its pipeline drained and the EAL
    is cleaned up at exit. (Python's default for SIGTERM ends the process at once, leaving DPDK's
    hugepage files and runtime folder behind.)"""
    import signal

    def interrupt(signum, frame):
        raise KeyboardInterrupt(signal.Signals(signum).name)
    for s in signals or (signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, interrupt)


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
    gnio.Error naming it); what is set later overrides what was set before. Conf.load(path)
    reads a YAML file of the same names (gnio_conf_file_load()).
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

    @classmethod
    def load(cls, path):
        """A Conf of the fields a YAML file sets: a mapping of gnio_conf's parts to their fields
        ("rx: {burst: 64}") or of full names ("rx.burst: 64"), read and checked by the library
        (a bad field or value raises gnio.Error naming the file, line and field). The file is
        read again when a Pipeline is made; what is set after it overrides it."""
        return cls().include(path)

    def include(self, path):
        """Apply a YAML file's fields here (after what is set so far); returns the Conf."""
        path = os.fspath(path)
        _gnio.conf_file_check(path)
        self._items.append((path,))
        return self

    def update(self, fields):
        """Set the fields of a dict (flat or nested by part) or of another Conf."""
        if isinstance(fields, Conf):
            self._items += fields.items()
            return self
        for k, v in _flatten(fields):
            self.set(k, v)
        return self

    def items(self):
        """What is applied, in order: (key, value) pairs and (path,) of YAML files."""
        return list(self._items)

    def __repr__(self):
        return "gnio.Conf(%r)" % [i if len(i) == 2 else ("file", i[0]) for i in self._items]


def _dl_type(t):
    """A NumPy type as DLPack's (code, bits): int 0, uint 1, float 2."""
    import numpy as np
    d = np.dtype(t)
    code = {"i": 0, "u": 1, "f": 2}.get(d.kind)
    if code is None:
        raise Error("%s: a row's elements are ints, uints or floats" % d)
    return d, code, d.itemsize * 8


def _np_type(code, bits):
    import numpy as np
    kind = {0: "i", 1: "u", 2: "f"}.get(code)
    if kind is None:
        raise Error("DLPack type code %d: not a NumPy type" % code)
    return np.dtype("<%s%d" % (kind, bits // 8))


class Handler:
    """A host handler written in Python: fn(packets, rx_port, tx_port) -> verdicts.

    The host consumer calls fn once a burst-queue item on its worker lcore (with the GIL):
    packets a list of NumPy uint8 arrays, each a packet's first segment in gnio's memory (change
    them in place: that is what is sent), valid during the call only; the verdicts any array-like
    of one integer a packet: a port to send it to (tx_port: the paired port, rx_port: back where
    it came in) or gnio.drop(reason). The slow path, for prototypes: bench/py-handler-bench
    measures it beside the C handlers. The name is what conf "consumer.handler" names.
    """

    def __init__(self, name, fn, help=""):
        _gnio.register_handler(name, help or "a handler in Python", fn)
        self.name = name
        self.fn = fn

    def stats(self):
        """Its counts: calls, errors (calls that raised or whose verdicts were wrong)."""
        return _gnio.handler_stats(self.name)

    def __repr__(self):
        return "gnio.Handler(%r, %r)" % (self.name, self.fn)


class Events:
    """A pipeline's event channels (gnio_state.h) with records of a NumPy structured type.

    Handlers push records (a C handler with gnio_event_push() on the channel ring(gpu) whose
    address it finds in its state; Python with push()); the application drains them: drain()
    as an array, or iterating, one NumPy record at a time, until the run is over.
    """

    def __init__(self, pipeline, dtype, nb_records):
        import numpy as np
        self.dtype = np.dtype(dtype)
        self._pl = pipeline
        self._final = None
        pipeline._p.events_create(self.dtype.itemsize, nb_records)
        pipeline._events.append(self)

    def ring(self, gpu=0):
        """The address of GPU gpu's channel (struct gnio_event_ring *), for a C handler's state."""
        return self._pl._p.events_ring(gpu)

    def push(self, record, gpu=0):
        """Push a record (a NumPy record or bytes of the record's size); False when the channel
        was full (the record is dropped and counted). Channels in host memory only: consumers
        host and cuda-batch."""
        import numpy as np
        b = record.tobytes() if isinstance(record, (np.void, np.ndarray)) else bytes(record)
        return self._pl._p.events_push(gpu, b)

    def drain(self, max_records=4096):
        """The records waiting, at most max_records, as an array of the type (in push order per GPU)."""
        import numpy as np
        return np.frombuffer(self._pl._p.events_drain(max_records), dtype=self.dtype)

    def counts(self):
        """pushed, dropped (the channel full), drained, pending, incomplete (after close: at close)."""
        return self._final if self._pl.closed else self._pl._p.events_counts()

    def __iter__(self):
        """Each record as a NumPy record, until the run is over (rx.max_packets received and
        answered, or stopped) and no record is left."""
        while True:
            recs = self.drain()
            for r in recs:
                yield r
            if len(recs):
                continue
            if not self._pl.running or (self._pl.poll() == 1 and self._pl.stats()["in_flight"] == 0):
                rest = self.drain()
                for r in rest:
                    yield r
                if not len(rest):
                    return
            time.sleep(0.001)


class BatchHandler:
    """A batch handler (<gnio/gnio_batch.h>) whose batches go to Python as DLPack tensors.

    BatchHandler(name, in_dtype, in_cols, out_dtype, out_cols, row=..., answer=...): each packet
    becomes a row of in_cols elements of in_dtype by row(packet, row, rx_port, tx_port) -> 0 (a
    row) or a verdict (gnio.drop(...), or a port to send it to as it is: no row); each row's
    packet is answered from its row of the result (out_cols of out_dtype) by answer(packet,
    result_row, rx_port, tx_port) -> verdict. packet, row and result_row are NumPy views of
    gnio's memory, valid during the call only. Both run once a packet, on the consumer's worker
    lcore, with the GIL: the slow path, for prototypes.

    BatchHandler(name, base="some-c-batch-handler"): the rows and answers of a C batch handler
    already registered (loaded with the application's library), batches in Python.

    batch=fn: fn(batch) fills batch.result on the worker lcore; without it the batches go to
    Pipeline.batches(). The name is what conf "consumer.handler" names (Pipeline(handler=...)).
    """

    def __init__(self, name, in_dtype=None, in_cols=0, out_dtype=None, out_cols=0, row=None, answer=None,
                 batch=None, base=None, help=""):
        if base is not None:
            ic, ib, in_cols, oc, ob, out_cols = _gnio.batch_spec(base)
            in_np, out_np = _np_type(ic, ib), _np_type(oc, ob)
        else:
            if in_dtype is None or out_dtype is None:
                raise TypeError("BatchHandler: in_dtype and out_dtype (or a base)")
            in_np, ic, ib = _dl_type(in_dtype)
            out_np, oc, ob = _dl_type(out_dtype)
        _gnio.register_batch(name, help or "batches in Python", (ic, ib, in_cols, oc, ob, out_cols), row, answer,
                             batch, in_np, out_np, base)
        self.name = name
        self.in_dtype, self.in_cols, self.out_dtype, self.out_cols = in_np, in_cols, out_np, out_cols
        self.base = base

    def stats(self):
        """Its counts: calls, errors (calls that raised), batches, batches_abandoned (at stop)."""
        return _gnio.handler_stats(self.name)

    def __repr__(self):
        return "gnio.BatchHandler(%r, %s x %d -> %s x %d%s)" % (
            self.name, self.in_dtype, self.in_cols, self.out_dtype, self.out_cols,
            ", base=%r" % self.base if self.base else "")


def _conf(conf):
    if conf is None:
        return Conf()
    if isinstance(conf, Conf):
        return conf
    if isinstance(conf, dict):
        return Conf(conf)
    if isinstance(conf, (str, os.PathLike)):
        return Conf.load(conf)
    raise TypeError("conf: a dict, a gnio.Conf or a YAML file's path, not %s" % type(conf).__name__)


def _eal(eal_args):
    if eal_args is None or isinstance(eal_args, list):
        return eal_args
    if isinstance(eal_args, str):
        return shlex.split(eal_args)
    return list(eal_args)


class Pipeline:
    """A gnio pipeline (gnio_pipeline_create()).

    Pipeline(eal_args, conf): eal_args the EAL's arguments (a list, or one string split as a
    shell would), needed by the first Pipeline of a process, which starts the EAL; conf a dict,
    a Conf, a YAML file's path or None (the defaults). Used as a context manager it is started on entry, stopped
    (drained) and closed on exit, also when the block raises (Ctrl-C included).
    """

    def __init__(self, eal_args=None, conf=None, handler=None):
        c = _conf(conf)
        if handler is not None:
            c = Conf(c).set("consumer.handler", handler if isinstance(handler, str) else handler.name)
        self.conf = c
        self._final = None
        self._events = []
        self._p = _gnio.Pipeline(_eal(eal_args), c.items())

    def start(self):
        """Start forwarding."""
        self._p.start()

    def poll(self):
        """Check health: 0 running, 1 once rx.max_packets were received; raises when the run failed."""
        return self._p.poll()

    def stop(self, answer=True):
        """Stop and drain: received = transmitted + dropped afterwards; raises when the drain failed.
        A batch Python holds is answered with its result as it is (or dropped: answer=False);
        batches it will not take are dropped (as handler), counted in stats()["python"]."""
        self._p.stop(answer)

    def close(self, answer=True):
        """Stop if running, then free the pipeline (its ports closed). stats(), check() and
        summary() still answer afterwards, with what they said at close."""
        if self._p.closed:
            return
        try:
            if self._p.running:
                self._p.stop(answer)
        finally:
            self._final = (self.stats(), self._p.check(), self._p.summary())
            for e in self._events:
                e._final = e.counts()
            self._p.close(answer)

    def state_alloc(self, init):
        """Every GPU's copy of the handler's state (gnio_pipeline_state_alloc()): init, bytes or a
        NumPy array, its first contents. While stopped."""
        self._p.state_alloc(init.tobytes() if hasattr(init, "tobytes") else bytes(init))

    def state_read(self, offset, length, gpu=0):
        """length bytes of GPU gpu's state at offset (while running too)."""
        return self._p.state_read(gpu, offset, length)

    def state_write(self, offset, data, gpu=0):
        """Write data (bytes or a NumPy array) into GPU gpu's state at offset."""
        self._p.state_write(gpu, offset, data.tobytes() if hasattr(data, "tobytes") else bytes(data))

    def events(self, dtype, nb_records=1024):
        """Make the event channels (one a GPU; once, while stopped) for records of NumPy type
        dtype, nb_records each (a power of two): a gnio.Events."""
        return Events(self, dtype, nb_records)

    def batches(self, idle=None):
        """The batches of the pipeline's BatchHandler (without batch=), in order: each a gnio.Batch
        (rows through __dlpack__, result to fill, stream). A batch is answered when the next one is
        asked for, on b.done(), or when it goes; its rows go back to gnio once it and every tensor
        taken from it are gone. Ends once rx.max_packets were received and answered, the pipeline
        stopped, or after idle seconds without a batch."""
        while True:
            b = self._p.next_batch(-1.0 if idle is None else float(idle))
            if b is None:
                return
            yield b

    def wait(self, duration=None):
        """Wait until rx.max_packets were received and answered (True), or @p duration seconds (False)."""
        return self._p.wait(-1.0 if duration is None else float(duration))

    def run(self, duration=None):
        """start(), wait(duration), stop(); the statistics snapshot at the end."""
        if not self.running:
            self.start()
        try:
            self.wait(duration)
        finally:
            if self.running:
                self.stop()
        return self.stats()

    def stats(self):
        """The statistics snapshot (gnio_pipeline_stats()) as a dict; with a handler of Python, its
        counts under "python", and gnio_batch_counts() under "batches"."""
        if self._final and self._p.closed:
            return self._final[0]
        st = self._p.stats()
        if self._p.handler is not None:
            st["python"] = _gnio.handler_stats(self._p.handler)
        st["batches"] = _gnio.batch_counts()
        return st

    def check(self):
        """The end-of-run checks (gnio_pipeline_check()) as a dict; "ok" when all hold."""
        return self._final[1] if self._final and self._p.closed else self._p.check()

    def summary(self):
        """(ok, line): the end-of-run check as one line."""
        return self._final[2] if self._final and self._p.closed else self._p.summary()

    def consumer_stats(self, gpu=0):
        """A GPU's consumer counters (gnio_pipeline_consumer_stats())."""
        return self._p.consumer_stats(gpu)

    def latency(self):
        """The RX-to-completion latency's quantiles, in ns."""
        return self._p.latency()

    def notes(self):
        """What create noted about placement and the data path."""
        return self._p.notes()

    def datapaths(self):
        """Each port's data path in effect."""
        return self._p.datapaths()

    def effective(self):
        """Fields of the configuration in effect (every "auto" resolved)."""
        return self._p.effective()

    def error(self):
        """The consumer's last error ("" if none)."""
        return self._p.error()

    @property
    def running(self):
        """Whether it forwards."""
        return self._p.running

    @property
    def closed(self):
        """Whether close() ran."""
        return self._p.closed

    def __enter__(self):
        if not self.running:
            self.start()
        return self

    def __exit__(self, et, ev, tb):
        self.close(answer=et is None)
        return False


# The EAL leaves hugepage files and a runtime folder behind unless cleaned up.
atexit.register(_gnio.eal_cleanup)
