"""What every view shares: controls on top, an SVG picture, details below.

A view builds a :class:`~minitf.widgets.drawing.Drawing` in its ``draw()``
method and :meth:`SvgView.redraw` puts the drawing's SVG into an
``ipywidgets.HTML``. SVG inside a core HTML widget needs no front-end code of
our own, so the same view works in JupyterLab, Notebook 7, VS Code and
Colab; the browser shows every mark's ``<title>`` as a tooltip.

The picture is shown at exactly its drawn size, never stretched: its
container is at most as wide as the output area and scrolls sideways when
the drawing is wider, so text keeps the size it was drawn at (11 px or
more). One drawing serves three audiences:

* a live front end shows the widget (the SVG);
* a static page (nbconvert, GitHub's preview) shows the ``image/png`` copy
  of the same drawing that :meth:`SvgView._repr_mimebundle_` adds;
* nbval, which compares text only, sees the stable ``__repr__``.
"""

import base64
import html
import threading

import ipywidgets as widgets

#: Shared style: monospace rows in pickers, so columns line up.
STYLE = ("<style>.minitf-view .minitf-rows select{font-family:'DejaVu Sans Mono',Menlo,"
         "Consolas,monospace;font-size:12px}.minitf-view .minitf-scroll{overflow-x:auto;"
         "max-width:100%}</style>")


def html_table(header, rows, caption=None, css="minitf-table"):
    """A small HTML table (values are escaped)."""
    cell = 'style="padding:2px 8px;border-bottom:1px solid #ddd;text-align:left"'
    out = ['<table class="%s" style="border-collapse:collapse;font-size:12px">' % css]
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


def fixed_width(text):
    """``text`` with non-breaking spaces, so a list box (which collapses
    runs of spaces) keeps its columns lined up."""
    return text.replace(" ", "\u00a0")


class SvgView(widgets.VBox):
    """Base class of the views. A subclass defines ``draw()``, which returns
    a Drawing of what the view shows now, and ``__repr__``; it calls
    :meth:`redraw` whenever that changed.

    Children, top to bottom: ``controls`` (one row of widgets), the picture,
    then ``details`` (tables, pickers).
    """

    css_class = "minitf-view"

    def __init__(self, controls=(), details=(), width=900):
        #: The width (px) a view lays its picture out for.
        self.width = int(width)
        self.picture = widgets.HTML()
        self.picture.add_class("minitf-picture")
        self.controls = list(controls)
        self.details = list(details)
        self.drawing = None
        self._draw_lock = threading.RLock()
        self._png = None
        children = [widgets.HTML(STYLE)]
        if self.controls:
            children.append(widgets.HBox(self.controls, layout=widgets.Layout(
                flex_flow="row wrap")))
        children += [self.picture] + self.details
        super().__init__(children=children)
        self.add_class("minitf-view")
        self.add_class(self.css_class)

    # -- drawing ------------------------------------------------------------------------------
    def redraw(self):
        """Draw again and show the new SVG."""
        with self._draw_lock:
            drawing = self.draw()
            self.drawing = drawing
            self._png = None
            self.picture.value = ('<div class="minitf-scroll" style="overflow-x:auto;'
                                  'max-width:100%%">%s</div>' % drawing.to_svg())

    def svg(self):
        """The SVG text of the current picture."""
        with self._draw_lock:
            return self.drawing.to_svg()

    def to_png(self):
        """PNG bytes of the current picture (the same drawing as the SVG)."""
        with self._draw_lock:
            if self._png is None:
                self._png = self.drawing.to_png()
            return self._png

    # -- how a notebook shows us ---------------------------------------------------------------
    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        """The widget (for live front ends), a PNG (for static pages) and
        ``repr`` (for text-only consumers such as nbval)."""
        bundle = {"text/plain": repr(self),
                  "image/png": base64.b64encode(self.to_png()).decode("ascii")}
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
