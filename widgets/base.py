"""What every view shares: a VBox of controls, an HTML legend and a PNG.

A view draws itself on a :class:`matplotlib.figure.Figure` (never pyplot, so
no backend or global state is involved), turns the figure into PNG bytes and
puts them in an ``ipywidgets.Image``. That one PNG serves three audiences:

* a live front end (JupyterLab, Notebook 7, VS Code, Colab) shows the widget;
* a static page (nbconvert, GitHub's preview) shows the ``image/png`` copy
  that :meth:`FigureView._repr_mimebundle_` adds next to the widget;
* nbval, which compares text only, sees the stable ``__repr__``.
"""

import base64
import html
import io
import threading

import ipywidgets as widgets
from matplotlib.figure import Figure

from .names import short_device


def figure_png(fig, dpi=100):
    """The PNG bytes of a matplotlib Figure."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight", facecolor="white")
    return buf.getvalue()


def legend_html(colors, counts=None, extra=()):
    """An HTML legend: a coloured square per device (with a count), then
    ``extra`` lines of (symbol html, meaning)."""
    items = []
    for device, color in colors.items():
        count = "" if counts is None else " <b>%s</b>" % counts.get(device, 0)
        items.append('<span style="white-space:nowrap;margin-right:1em">'
                     '<span style="display:inline-block;width:0.9em;height:0.9em;'
                     'background:%s;border:1px solid #333;vertical-align:middle"></span> '
                     '<code title="%s">%s</code>%s</span>'
                     % (color, html.escape(device), html.escape(short_device(device)), count))
    for symbol, meaning in extra:
        items.append('<span style="white-space:nowrap;margin-right:1em">%s %s</span>'
                     % (symbol, html.escape(meaning)))
    return '<div class="minitf-legend" style="line-height:1.8">%s</div>' % " ".join(items)


def html_table(header, rows, caption=None):
    """A small HTML table (values are escaped)."""
    cell = 'style="padding:2px 8px;border-bottom:1px solid #ddd;text-align:left"'
    out = ['<table class="minitf-table" style="border-collapse:collapse;font-size:12px">']
    if caption:
        out.append("<caption style='text-align:left;font-weight:bold'>%s</caption>"
                   % html.escape(caption))
    out.append("<tr>%s</tr>" % "".join("<th %s>%s</th>" % (cell, html.escape(str(h)))
                                       for h in header))
    for row in rows:
        out.append("<tr>%s</tr>" % "".join("<td %s>%s</td>" % (cell, html.escape(str(v)))
                                           for v in row))
    out.append("</table>")
    return "".join(out)


class FigureView(widgets.VBox):
    """Base class: subclasses implement :meth:`draw` (and ``__repr__``).

    ``self.controls`` (a list of widgets) goes on top, then ``self.legend``,
    then ``self.image``, then ``self.details`` (extra widgets, e.g. tables).
    Call :meth:`redraw` whenever what the picture shows has changed.
    """

    css_class = "minitf-view"

    def __init__(self, controls=(), details=(), **kwargs):
        self.legend = widgets.HTML()
        self.image = widgets.Image(format="png", layout=widgets.Layout(max_width="100%"))
        self.controls = list(controls)
        self.details = list(details)
        self._draw_lock = threading.Lock()
        self._png = b""
        children = []
        if self.controls:
            children.append(widgets.HBox(self.controls))
        children += [self.legend, self.image] + self.details
        super().__init__(children=children, **kwargs)
        self.add_class("minitf-view")
        self.add_class(self.css_class)

    # -- drawing ---------------------------------------------------------------------------
    def draw(self, fig):
        """Draw the view on ``fig`` (a fresh matplotlib Figure)."""
        raise NotImplementedError

    def figure(self):
        """A new Figure with the current picture (handy to save or embed)."""
        fig = Figure(figsize=(8, 4))
        self.draw(fig)
        return fig

    def to_png(self):
        """PNG bytes of the current picture."""
        with self._draw_lock:
            return figure_png(self.figure())

    def redraw(self):
        """Redraw the picture and send it to the Image widget."""
        self._png = self.to_png()
        self.image.value = self._png

    # -- how a notebook shows us ----------------------------------------------------------
    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        """The widget (for live front ends), its PNG (for static pages) and
        ``repr`` (for text-only consumers such as nbval)."""
        bundle = {"text/plain": repr(self),
                  "image/png": base64.b64encode(self._png or self.to_png()).decode("ascii")}
        model_id = getattr(self, "model_id", None)  # None once the widget is closed
        if model_id:
            bundle["application/vnd.jupyter.widget-view+json"] = {
                "version_major": 2, "version_minor": 0, "model_id": model_id}
        return bundle

    def _ipython_display_(self, **kwargs):
        # ipywidgets 7 displays widgets through this hook (8 uses the bundle
        # above); sending our own bundle makes both versions show the same.
        from IPython.display import display   # lazy import: only where IPython runs
        display(self._repr_mimebundle_(), raw=True)
