"""TransferView: a timeline of one or more steps, one lane per device, with
every transfer drawn as an arrow from the lane that sent it to the lane that
received it.

::

    md = tf.RunMetadata()
    sess.run(y, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
             run_metadata=md)
    TransferView(md)            # or TransferView([md1, md2, ...]) for several steps

Under the picture: a table of the transfers (source, destination, tensor,
bytes, time, MB/s) and the totals per link. A transfer between tasks went
over the network; one between two devices of one task (host<->GPU) is a
device copy. Both are drawn the same way.
"""

import ipywidgets as widgets
from matplotlib.patches import Patch

from .base import FigureView, html_table, legend_html
from .names import (device_colors, format_bytes, format_micros, short_device, task_of)
from .transfers import as_steps, lanes, link_totals, op_spans, transfer_rows

ARROW = {"network": "#d62728", "device copy": "#ff7f0e"}


class TransferView(FigureView):
    """Ops per device over time, and the tensors that crossed between them."""

    css_class = "minitf-transfer-view"

    def __init__(self, run_metadata):
        self.steps = as_steps(run_metadata)
        self.rows = transfer_rows(self.steps)
        self.spans = op_spans(self.steps)
        self.colors = device_colors(lanes(self.spans, self.rows))
        options = [("all steps", 0)] + [("step %d" % i, i)
                                        for i in range(1, len(self.steps) + 1)]
        self.step_selector = widgets.Dropdown(description="show", options=options,
                                              value=0 if len(self.steps) > 1 else 1)
        self.table = widgets.HTML()
        self.totals = widgets.HTML()
        super().__init__(controls=[self.step_selector], details=[self.table, self.totals])
        self.legend.value = legend_html(
            self.colors, extra=[('<span style="color:%s">──▶</span>' % ARROW["network"],
                                 "transfer between tasks"),
                                ('<span style="color:%s">──▶</span>' % ARROW["device copy"],
                                 "copy between devices of one task")])
        self.step_selector.observe(self._on_change, names="value")
        self._on_change()

    # -- what the view shows ---------------------------------------------------------------------
    def shown_rows(self):
        """The transfers of the selected step(s)."""
        step = self.step_selector.value
        return [r for r in self.rows if step in (0, r.step)]

    def shown_spans(self):
        step = self.step_selector.value
        return [s for s in self.spans if step in (0, s.step)]

    def _on_change(self, change=None):
        rows = self.shown_rows()
        self.table.value = html_table(
            ["step", "source", "destination", "tensor", "bytes", "time", "MB/s", "kind"],
            [(r.step, short_device(r.src_device), short_device(r.dst_device), r.tensor,
              r.bytes, format_micros(r.micros), "%.3g" % r.mb_per_s if r.micros else "-",
              r.kind) for r in rows],
            caption="Transfers (%d)" % len(rows)) if rows else \
            "<i>No transfers in this step: every tensor stayed on its device.</i>"
        totals = link_totals(rows)
        self.totals.value = html_table(
            ["link", "transfers", "bytes", "time", "average MB/s"],
            [("%s → %s" % (short_device(a), short_device(b)), t["transfers"], t["bytes"],
              format_micros(t["micros"]),
              "%.3g" % (t["bytes"] / t["micros"]) if t["micros"] else "-")
             for (a, b), t in totals.items()],
            caption="Totals per link") if rows else ""
        self.redraw()

    # -- the picture ---------------------------------------------------------------------------
    def draw(self, fig):
        rows, spans = self.shown_rows(), self.shown_spans()
        devices = lanes(spans, rows) or list(self.colors)
        lane = {d: i for i, d in enumerate(devices)}
        totals = link_totals(rows)
        fig.set_size_inches(12, 1.6 + 1.1 * max(2, len(devices)))
        if totals:
            grid = fig.add_gridspec(1, 2, width_ratios=[3.2, 1], wspace=0.35)
            ax, bx = fig.add_subplot(grid[0]), fig.add_subplot(grid[1])
        else:
            ax, bx = fig.add_subplot(1, 1, 1), None

        times = [s.start_micros for s in spans] + [r.start_micros for r in rows]
        ends = [s.end_micros for s in spans] + [r.end_micros for r in rows]
        t0 = min(times) if times else 0
        span_ms = max(1e-3, ((max(ends) if ends else 1) - t0) / 1000.0)

        def ms(us):
            return (us - t0) / 1000.0

        # Lanes: shaded per task so a task's devices read as one block.
        for i, d in enumerate(devices):
            shade = "#f2f2f2" if sorted({task_of(x) for x in devices}).index(task_of(d)) % 2 \
                == 0 else "#e6eef7"
            ax.axhspan(i - 0.45, i + 0.45, color=shade, zorder=0)
        label_end = {}
        for s in sorted(spans, key=lambda s: s.start_micros):
            width = max(ms(s.end_micros) - ms(s.start_micros), span_ms * 0.004)
            ax.broken_barh([(ms(s.start_micros), width)], (lane[s.device] - 0.3, 0.6),
                           facecolors=self.colors.get(s.device, "#888"), edgecolor="white",
                           linewidth=0.5, zorder=2)
            label = s.op_type.lstrip("_") if s.op_type in ("_Send", "_Recv") else \
                s.name.split("/")[-1]
            # Name a bar only when it is wide enough and clear of the last name.
            room = width / span_ms * 130  # about how many characters fit (12-inch axes)
            if len(label) < room and ms(s.start_micros) > label_end.get(s.device, -1e18):
                ax.text(ms(s.start_micros) + width / 2, lane[s.device], label, fontsize=7,
                        ha="center", va="center", color="white", zorder=3, clip_on=True)
                label_end[s.device] = ms(s.start_micros) + width
        last_x = {}  # label slot -> x of the last label put there
        for r in sorted(rows, key=lambda r: (r.start_micros + r.end_micros)):
            a = (ms(r.start_micros), lane[r.src_device])
            b = (ms(r.end_micros), lane[r.dst_device])
            ax.annotate("", xy=b, xytext=a, zorder=4, arrowprops=dict(
                arrowstyle="-|>", color=ARROW[r.kind], lw=1.6, shrinkA=0, shrinkB=0,
                connectionstyle="arc3,rad=0.0" if a[1] == b[1] else "arc3,rad=-0.08"))
            if len(rows) <= 16:
                # Transfers that overlap in time get their labels stacked.
                x = (a[0] + b[0]) / 2
                slot = next(k for k in range(len(rows) + 1)
                            if x - last_x.get(k, -1e18) > span_ms * 0.22)
                last_x[slot] = x
                dy = (0, -0.2, 0.2, -0.4, 0.4, -0.6, 0.6)[slot % 7]
                ax.text(x, (a[1] + b[1]) / 2 + dy, "%s · %s · %s" % (
                    r.tensor, format_bytes(r.bytes), format_micros(r.micros)),
                        fontsize=7, ha="center", va="center", zorder=5, color="#7f0000",
                        bbox=dict(boxstyle="round,pad=0.15", fc="white", ec=ARROW[r.kind],
                                  lw=0.6, alpha=0.9))
        if self.step_selector.value == 0 and len(self.steps) > 1:
            for i in range(1, len(self.steps) + 1):
                first = [s.start_micros for s in spans if s.step == i]
                if first:
                    ax.axvline(ms(min(first)), color="#555", ls=":", lw=1, zorder=1)
                    ax.text(ms(min(first)), -0.5, " step %d" % i, fontsize=8,
                            va="bottom", color="#333")
        ax.set_yticks(range(len(devices)))
        ax.set_yticklabels([short_device(d) for d in devices], fontsize=8.5)
        ax.set_ylim(len(devices) - 0.5, -0.75)
        ax.set_xlim(-span_ms * 0.02, span_ms * 1.02)
        ax.set_xlabel("time since the %s started (ms)" % (
            "first step" if self.step_selector.value == 0 and len(self.steps) > 1 else "step"),
            fontsize=9)
        ax.tick_params(axis="x", labelsize=8)
        for side in ("top", "right", "left"):
            ax.spines[side].set_visible(False)
        ax.set_title("%s: %d ops, %d transfers (%s)" % (
            "all %d steps" % len(self.steps) if self.step_selector.value == 0 else
            "step %d" % self.step_selector.value, len(spans), len(rows),
            format_bytes(sum(r.bytes for r in rows))), fontsize=10, loc="left")
        handles = [Patch(color=c, label=short_device(d)) for d, c in self.colors.items()]
        if rows:
            handles += [Patch(color=ARROW[k], label="transfer: " + k)
                        for k in sorted({r.kind for r in rows})]
        ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.22),
                  ncol=min(4, len(handles)), fontsize=8, frameon=False)

        if bx is not None:  # totals per link
            labels = ["%s\n→ %s" % (short_device(a), short_device(b)) for a, b in totals]
            values = [t["bytes"] for t in totals.values()]
            bx.barh(range(len(values)), values, color=[
                ARROW["network" if task_of(a) != task_of(b) else "device copy"]
                for a, b in totals], height=0.5)
            for i, ((a, b), t) in enumerate(totals.items()):
                bx.text(values[i], i, " %s in %d" % (format_bytes(t["bytes"]),
                                                   t["transfers"]),
                        va="center", fontsize=7.5)
            bx.set_yticks(range(len(values)))
            bx.set_yticklabels(labels, fontsize=7.5)
            bx.set_ylim(len(values) - 0.5, -0.5)
            bx.set_xlim(0, max(values + [1]) * 1.7)
            bx.set_xlabel("bytes per link", fontsize=8.5)
            bx.tick_params(axis="x", labelsize=7.5)
            bx.set_title("totals per link", fontsize=9, loc="left")
            for side in ("top", "right"):
                bx.spines[side].set_visible(False)

    def __repr__(self):
        totals = link_totals(self.rows)
        links = "; ".join("%s -> %s: %d transfers, %d bytes" % (a, b, t["transfers"], t["bytes"])
                          for (a, b), t in totals.items())
        return "TransferView(%d step%s, %d ops, %d transfers, %d bytes%s)" % (
            len(self.steps), "" if len(self.steps) == 1 else "s", len(self.spans),
            len(self.rows), sum(r.bytes for r in self.rows), "; " + links if links else "")
