#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A live plot of a pipeline's statistics with matplotlib, for a notebook (docs/PYTHON.md): the
packets received and sent a second, the drops a second by reason, what is in flight and the
mbufs in use, sampled from Pipeline.stats() every period and redrawn in place.

In a notebook (Jupyter):

    import gnio
    from live_plot import LivePlot
    p = gnio.Pipeline(eal_args, conf)
    with p:
        LivePlot(p).run(seconds=30)      # the figure in the cell's output, redrawn each period

As a script (with no display, the last figure saved with --out):

  live_plot.py [--duration S] [--period S] [--handler NAME] [--conf FILE.yaml] [--out PNG]
               -- EAL-ARGS
runs the handler (macswap) on the host consumer (every mbuf a 64-byte UDP packet where the port
is net_null: rx.prefill_len) and prints one line with what it sampled; exits 1 if the run's
check fails, 2 on a bad option or configuration.
"""
import argparse
import sys
import time

import gnio


class LivePlot:
    """Samples a running pipeline's stats() every @p period seconds and redraws a figure of the
    last @p window seconds."""

    def __init__(self, pipeline, period=0.5, window=60.0):
        import matplotlib.pyplot as plt
        self.p, self.period, self.window = pipeline, period, window
        self.t, self.rx, self.tx, self.inflight, self.in_use = [], [], [], [], []
        self.drops = {}
        self.fig, (self.ax_rate, self.ax_drop, self.ax_fly) = plt.subplots(3, 1, figsize=(8, 7), sharex=True)
        self.fig.suptitle("gnio pipeline")
        self._last = None
        self._t0 = time.monotonic()
        self._shown = None

    def sample(self):
        """One sample: rates since the last one."""
        st, now = self.p.stats(), time.monotonic()
        if self._last is not None:
            (t0, s0), dt = self._last, now - self._last[0]
            tot, tot0 = st["total"], s0["total"]
            self.t.append(now - self._t0)
            self.rx.append((tot["rx"] + tot["generated"] - tot0["rx"] - tot0["generated"]) / dt / 1e6)
            self.tx.append((tot["tx"] - tot0["tx"]) / dt / 1e6)
            for r, n in tot["drops"].items():
                d = (n - tot0["drops"][r]) / dt / 1e6
                if d > 0 or r in self.drops:
                    self.drops.setdefault(r, [0.0] * (len(self.t) - 1)).append(d)
            for r, series in self.drops.items():
                if len(series) < len(self.t):
                    series.append(0.0)
            self.inflight.append(st["in_flight"])
            self.in_use.append(sum(pl["in_use"] for pl in st["pools"]))
        self._last = (now, st)

    def draw(self):
        """Redraw with the samples of the last window."""
        keep = [i for i, t in enumerate(self.t) if t >= (self.t[-1] if self.t else 0) - self.window]
        t = [self.t[i] for i in keep]
        for ax in (self.ax_rate, self.ax_drop, self.ax_fly):
            ax.clear()
        self.ax_rate.plot(t, [self.rx[i] for i in keep], label="received")
        self.ax_rate.plot(t, [self.tx[i] for i in keep], label="sent")
        self.ax_rate.set_ylabel("Mpps")
        self.ax_rate.legend(loc="upper left")
        for r, series in self.drops.items():
            self.ax_drop.plot(t, [series[i] for i in keep], label=r)
        self.ax_drop.set_ylabel("dropped, Mpps")
        if self.drops:
            self.ax_drop.legend(loc="upper left")
        self.ax_fly.plot(t, [self.inflight[i] for i in keep], label="in flight")
        self.ax_fly.plot(t, [self.in_use[i] for i in keep], label="mbufs in use")
        self.ax_fly.set_ylabel("packets")
        self.ax_fly.set_xlabel("s")
        self.ax_fly.legend(loc="upper left")
        self._show()

    def _show(self):
        try:
            from IPython import get_ipython
            from IPython.display import display
            notebook = get_ipython() is not None
        except ImportError:
            notebook = False
        if notebook:
            # Redrawn in place in the cell's output.
            if self._shown is None:
                self._shown = display(self.fig, display_id=True)
            else:
                self._shown.update(self.fig)
        else:
            self.fig.canvas.draw_idle()
            self.fig.canvas.flush_events()

    def run(self, seconds=None):
        """Sample and redraw until the run is over (rx.max_packets received and answered, or
        stopped) or @p seconds passed; Ctrl-C stops the plot, not the pipeline."""
        end = None if seconds is None else time.monotonic() + seconds
        try:
            while self.p.running and (end is None or time.monotonic() < end):
                self.sample()
                if self.t and self._live():
                    self.draw()
                if self.p.poll() == 1 and self.p.stats()["in_flight"] == 0:
                    break
                time.sleep(self.period)
        except KeyboardInterrupt:
            pass
        return self

    def _live(self):
        """Whether anyone sees a redraw: a notebook, or a window (not matplotlib's file backends)."""
        import matplotlib
        try:
            from IPython import get_ipython
            if get_ipython() is not None:
                return True
        except ImportError:
            pass
        return matplotlib.get_backend().lower() not in ("agg", "pdf", "ps", "svg", "cairo", "template")

    def save(self, path):
        """The figure of every sample so far, into a file (PNG, SVG, PDF: by its name)."""
        if self.t:
            self.draw()
        self.fig.savefig(path)


def fail(message, code=2):
    print("live_plot: %s" % message, file=sys.stderr)
    sys.exit(code)


class Args(argparse.ArgumentParser):
    def error(self, message):
        fail(message)


def main():
    ap = Args(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--period", type=float, default=0.5)
    ap.add_argument("--handler", default="macswap")
    ap.add_argument("--conf")
    ap.add_argument("--out")
    ap.add_argument("eal", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    eal = [x for x in a.eal if x != "--"]
    try:
        import matplotlib
    except ImportError:
        fail("no matplotlib here (python3-matplotlib)")
    if a.out:
        matplotlib.use("Agg")
    conf = gnio.Conf.load(a.conf) if a.conf else gnio.Conf({"consumer.name": "host", "gpu.name": "host"})
    conf.update({"consumer.handler": a.handler})
    if any(x.startswith("--vdev=net_null") for x in eal):
        conf.set("rx.prefill_len", 64)
    try:
        p = gnio.Pipeline(eal, conf)
    except gnio.Error as e:
        fail(e)
    with p:
        lp = LivePlot(p, period=a.period).run(a.duration)
    if a.out:
        lp.save(a.out)
    ok, line = p.summary()
    print("live_plot: %d samples over %.1f s, %.3f Mpps received at the last; %s" % (
        len(lp.t), lp.t[-1] if lp.t else 0.0, lp.rx[-1] if lp.rx else 0.0, line))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
