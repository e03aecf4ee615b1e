"""A small 2-D drawing that becomes SVG (for live notebooks) or PNG (for
static pages and nbval), from the same list of shapes.

Coordinates are CSS pixels, y grows downwards, and the drawing is shown at
exactly its own size: an 11 px label is 11 px on screen. Every shape can
carry a ``title`` (the browser shows it as a tooltip when you hover the
mark), a ``css`` class and ``data`` attributes (tests and scripts find marks
by them)::

    d = Drawing(300, 80)
    d.rect(10, 10, 120, 20, fill="#1f77b4", title="MatMul on worker/task:0/CPU:0",
           css="op", data={"op": "layer/y"})
    d.text(10, 50, "hello", size=12)
    svg_text = d.to_svg()          # what the widget shows
    png_bytes = d.to_png()         # what GitHub / nbconvert show

Text is measured, not rendered, to lay pictures out: :func:`text_width`
gives a label's width in the monospace font labels use (every character is
0.6 em wide there), so a label that is shortened to fit really fits.
"""

import html
import io
import math
from dataclasses import dataclass, field

SANS = "DejaVu Sans, Verdana, Arial, sans-serif"
MONO = "DejaVu Sans Mono, Menlo, Consolas, monospace"
#: Width of one character of the monospace font, in em.
MONO_EM = 0.6
#: The smallest text any view draws (px).
MIN_TEXT_PX = 11


def text_width(text, size=MIN_TEXT_PX, mono=True):
    """Width in px of ``text`` at ``size`` px: exact for the monospace font,
    a safe (wide) estimate for the sans-serif one."""
    return len(text) * size * (MONO_EM if mono else 0.62)


def chars_that_fit(width, size=MIN_TEXT_PX):
    """How many monospace characters fit in ``width`` px."""
    return max(0, int(width / (size * MONO_EM) + 1e-6))


@dataclass
class Shape:
    kind: str                       # rect, circle, path, polygon, text
    geometry: dict
    style: dict
    title: str = ""
    css: str = ""
    data: dict = field(default_factory=dict)


class Drawing:
    """A list of shapes on a ``width`` x ``height`` px canvas."""

    def __init__(self, width, height, background="white"):
        self.width = int(math.ceil(width))
        self.height = int(math.ceil(height))
        self.background = background
        self.shapes = []

    # -- adding shapes -----------------------------------------------------------------------
    def _add(self, kind, geometry, style, title, css, data):
        shape = Shape(kind, geometry, style, title or "", css or "", dict(data or {}))
        self.shapes.append(shape)
        return shape

    def rect(self, x, y, w, h, fill="none", stroke=None, stroke_width=1.0, radius=0,
             hatch=None, dash=None, opacity=1.0, title="", css="", data=None):
        """A rectangle. ``hatch`` (a colour) draws diagonal stripes of that
        colour over ``fill``: the views use it for "waiting"."""
        return self._add("rect", dict(x=x, y=y, w=max(w, 0), h=max(h, 0), r=radius),
                         dict(fill=fill, stroke=stroke, stroke_width=stroke_width,
                              hatch=hatch, dash=dash, opacity=opacity), title, css, data)

    def circle(self, cx, cy, r, fill="none", stroke=None, stroke_width=1.0, title="",
               css="", data=None):
        return self._add("circle", dict(cx=cx, cy=cy, r=r),
                         dict(fill=fill, stroke=stroke, stroke_width=stroke_width),
                         title, css, data)

    def line(self, x1, y1, x2, y2, stroke="#000", stroke_width=1.0, dash=None,
             opacity=1.0, title="", css="", data=None):
        return self.path([("M", x1, y1), ("L", x2, y2)], stroke=stroke,
                         stroke_width=stroke_width, dash=dash, opacity=opacity,
                         title=title, css=css, data=data)

    def path(self, commands, stroke="#000", stroke_width=1.0, dash=None, fill="none",
             opacity=1.0, title="", css="", data=None):
        """``commands``: ("M", x, y), ("L", x, y) and ("Q", cx, cy, x, y)
        (a quadratic curve through control point cx, cy)."""
        return self._add("path", dict(commands=list(commands)),
                         dict(stroke=stroke, stroke_width=stroke_width, dash=dash,
                              fill=fill, opacity=opacity), title, css, data)

    def polygon(self, points, fill="#000", stroke=None, opacity=1.0, title="", css="",
                data=None):
        return self._add("polygon", dict(points=list(points)),
                         dict(fill=fill, stroke=stroke, opacity=opacity), title, css, data)

    def arrow(self, x1, y1, x2, y2, color="#000", width=1.5, bend=0.0, via=None, dash=None,
              head=7.0, opacity=1.0, title="", css="", data=None):
        """A line ending in a filled arrowhead at (x2, y2), curved through the
        control point ``via`` (x, y) or by ``bend`` (a fraction of its length,
        sideways). Returns the line's shape."""
        dx, dy = x2 - x1, y2 - y1
        length = math.hypot(dx, dy) or 1.0
        if via is not None:
            cx, cy = via
            bend = True
        elif bend:
            cx = (x1 + x2) / 2 - dy * bend
            cy = (y1 + y2) / 2 + dx * bend
        if bend:
            tx, ty = x2 - cx, y2 - cy           # the curve's direction at its end
        else:
            tx, ty = dx, dy
        t = math.hypot(tx, ty) or 1.0
        ux, uy = tx / t, ty / t
        head = min(head, length * 0.6)
        bx, by = x2 - ux * head, y2 - uy * head  # the base of the head
        cmds = [("M", x1, y1), ("Q", cx, cy, bx, by)] if bend else \
            [("M", x1, y1), ("L", bx, by)]
        line = self.path(cmds, stroke=color, stroke_width=width, dash=dash, opacity=opacity,
                         title=title, css=css, data=data)
        half = head * 0.45
        self.polygon([(x2, y2), (bx - uy * half, by + ux * half),
                      (bx + uy * half, by - ux * half)], fill=color, opacity=opacity,
                     title=title, css=" ".join(c + "-head" for c in css.split()), data=data)
        return line

    def text(self, x, y, text, size=MIN_TEXT_PX, color="#222", anchor="start",
             weight="normal", mono=False, title="", css="", data=None):
        """Text whose *baseline* starts at (x, y); ``anchor`` start, middle or end."""
        if size < MIN_TEXT_PX:
            raise ValueError("text smaller than %d px is unreadable: %r" % (MIN_TEXT_PX, text))
        return self._add("text", dict(x=x, y=y, text=str(text)),
                         dict(size=size, color=color, anchor=anchor, weight=weight,
                              mono=mono), title, css, data)

    # -- SVG -----------------------------------------------------------------------------------
    def to_svg(self, css=""):
        """The drawing as an ``<svg>`` element, ``width`` x ``height`` px,
        never scaled (its container scrolls if it is narrower)."""
        hatches = sorted({s.style["hatch"] for s in self.shapes
                          if s.kind == "rect" and s.style.get("hatch")})
        out = ['<svg xmlns="http://www.w3.org/2000/svg" class="minitf-svg%s" width="%d" '
               'height="%d" viewBox="0 0 %d %d" style="display:block;max-width:none;'
               'font-family:%s">' % (" " + css if css else "", self.width, self.height,
                                     self.width, self.height, SANS)]
        if hatches:
            out.append("<defs>")
            for color in hatches:
                out.append('<pattern id="%s" patternUnits="userSpaceOnUse" width="6" '
                           'height="6" patternTransform="rotate(45)"><rect width="6" '
                           'height="6" fill="white"/><line x1="0" y1="0" x2="0" y2="6" '
                           'stroke="%s" stroke-width="2.5"/></pattern>'
                           % (_hatch_id(color), color))
            out.append("</defs>")
        if self.background:
            out.append('<rect x="0" y="0" width="%d" height="%d" fill="%s"/>'
                       % (self.width, self.height, self.background))
        for s in self.shapes:
            out.append(_svg_shape(s))
        out.append("</svg>")
        return "".join(out)

    # -- PNG -----------------------------------------------------------------------------------
    def to_png(self, scale=1.0):
        """The same drawing rendered by matplotlib (1 px = 1 px at ``scale`` 1)."""
        import matplotlib   # lazy import: matplotlib's start-up cost, only for a PNG
        with matplotlib.rc_context({"text.hinting": "no_hinting"}):
            # Unhinted glyphs keep their true advance (0.6 em in the monospace
            # font), as in a browser, so labels measured by text_width fit.
            return self._render_png(scale)

    def _render_png(self, scale):
        # lazy imports (as in to_png): matplotlib only when a PNG is drawn
        from matplotlib.figure import Figure  # lazy
        from matplotlib.patches import Circle, FancyBboxPatch, PathPatch, Polygon, Rectangle  # lazy
        from matplotlib.path import Path  # lazy

        dpi = 72.0 * scale  # at 72 dpi one point is one pixel
        fig = Figure(figsize=(self.width / 72.0, self.height / 72.0), dpi=dpi)
        ax = fig.add_axes([0, 0, 1, 1])
        ax.set_xlim(0, self.width)
        ax.set_ylim(self.height, 0)
        ax.set_axis_off()
        fig.patch.set_facecolor(self.background or "white")
        for z, s in enumerate(self.shapes):
            g, st = s.geometry, s.style
            if s.kind == "rect":
                kwargs = dict(facecolor=_mpl_color(st["fill"]), zorder=z,
                              edgecolor=_mpl_color(st["stroke"]) if st["stroke"] else "none",
                              linewidth=st["stroke_width"] if st["stroke"] else 0,
                              alpha=st["opacity"],
                              linestyle=(0, st["dash"]) if st["dash"] else "solid")
                if st["hatch"]:
                    kwargs.update(facecolor="white", hatch="////")
                    if not st["stroke"]:
                        kwargs.update(edgecolor=st["hatch"], linewidth=0)
                if g["r"]:
                    patch = FancyBboxPatch((g["x"], g["y"]), g["w"], g["h"],
                                           boxstyle="round,pad=0,rounding_size=%g" % g["r"],
                                           **kwargs)
                else:
                    patch = Rectangle((g["x"], g["y"]), g["w"], g["h"], **kwargs)
                if st["hatch"]:
                    _set_hatch_color(patch, st["hatch"])
                ax.add_patch(patch)
            elif s.kind == "circle":
                ax.add_patch(Circle((g["cx"], g["cy"]), g["r"], zorder=z,
                                    facecolor=_mpl_color(st["fill"]),
                                    edgecolor=_mpl_color(st["stroke"]) if st["stroke"] else "none",
                                    linewidth=st["stroke_width"] if st["stroke"] else 0))
            elif s.kind == "path":
                verts, codes = [], []
                for c in g["commands"]:
                    if c[0] == "M":
                        verts.append(c[1:3]); codes.append(Path.MOVETO)
                    elif c[0] == "L":
                        verts.append(c[1:3]); codes.append(Path.LINETO)
                    else:
                        verts += [c[1:3], c[3:5]]; codes += [Path.CURVE3, Path.CURVE3]
                ax.add_patch(PathPatch(Path(verts, codes), zorder=z, facecolor="none",
                                       edgecolor=_mpl_color(st["stroke"]),
                                       linewidth=st["stroke_width"], alpha=st["opacity"],
                                       linestyle=(0, st["dash"]) if st["dash"] else "solid"))
            elif s.kind == "polygon":
                ax.add_patch(Polygon(g["points"], closed=True, zorder=z, alpha=st["opacity"],
                                     facecolor=_mpl_color(st["fill"]),
                                     edgecolor=_mpl_color(st["stroke"]) if st["stroke"]
                                     else "none"))
            elif s.kind == "text":
                ax.text(g["x"], g["y"], g["text"], fontsize=st["size"], color=st["color"],
                        ha={"start": "left", "middle": "center", "end": "right"}[st["anchor"]],
                        va="baseline", fontweight=st["weight"], zorder=z,
                        family="DejaVu Sans Mono" if st["mono"] else "DejaVu Sans")
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, facecolor=fig.get_facecolor())
        return buf.getvalue()


# -- helpers ---------------------------------------------------------------------------------
def _set_hatch_color(patch, color):
    """Hatch colour: its own setter on matplotlib >= 3.10, the edge colour before."""
    if hasattr(patch, "set_hatchcolor"):
        patch.set_hatchcolor(color)
    else:
        patch.set_edgecolor(color)


def _hatch_id(color):
    return "minitf-hatch-" + color.lstrip("#")


def _mpl_color(color):
    return "none" if color in (None, "none") else color


def _num(v):
    return ("%.2f" % v).rstrip("0").rstrip(".")


def _attrs(s):
    out = ""
    if s.css:
        out += ' class="%s"' % html.escape(s.css, quote=True)
    for k, v in s.data.items():
        out += ' data-%s="%s"' % (k, html.escape(str(v), quote=True))
    return out


def _stroke(st):
    if not st.get("stroke"):
        return ""
    out = ' stroke="%s" stroke-width="%s"' % (st["stroke"], _num(st["stroke_width"]))
    if st.get("dash"):
        out += ' stroke-dasharray="%s"' % " ".join(_num(v) for v in st["dash"])
    return out


def _svg_shape(s):
    g, st = s.geometry, s.style
    title = "<title>%s</title>" % html.escape(s.title) if s.title else ""
    opacity = ' opacity="%s"' % _num(st["opacity"]) if st.get("opacity", 1) != 1 else ""
    if s.kind == "rect":
        fill = "url(#%s)" % _hatch_id(st["hatch"]) if st["hatch"] else st["fill"]
        radius = ' rx="%s"' % _num(g["r"]) if g["r"] else ""
        return '<rect x="%s" y="%s" width="%s" height="%s"%s fill="%s"%s%s%s>%s</rect>' % (
            _num(g["x"]), _num(g["y"]), _num(g["w"]), _num(g["h"]), radius, fill,
            _stroke(st), opacity, _attrs(s), title)
    if s.kind == "circle":
        return '<circle cx="%s" cy="%s" r="%s" fill="%s"%s%s>%s</circle>' % (
            _num(g["cx"]), _num(g["cy"]), _num(g["r"]), st["fill"], _stroke(st), _attrs(s),
            title)
    if s.kind == "path":
        d = " ".join(c[0] + " " + " ".join(_num(v) for v in c[1:]) for c in g["commands"])
        return '<path d="%s" fill="%s"%s%s%s>%s</path>' % (
            d, st["fill"], _stroke(st), opacity, _attrs(s), title)
    if s.kind == "polygon":
        pts = " ".join("%s,%s" % (_num(x), _num(y)) for x, y in g["points"])
        return '<polygon points="%s" fill="%s"%s%s%s>%s</polygon>' % (
            pts, st["fill"], _stroke(st), opacity, _attrs(s), title)
    if s.kind == "text":
        family = ' font-family="%s"' % MONO if st["mono"] else ""
        weight = ' font-weight="%s"' % st["weight"] if st["weight"] != "normal" else ""
        anchor = ' text-anchor="%s"' % st["anchor"] if st["anchor"] != "start" else ""
        # The title after the words, so the element's own text is the label.
        return '<text x="%s" y="%s" font-size="%s" fill="%s"%s%s%s%s>%s%s</text>' % (
            _num(g["x"]), _num(g["y"]), _num(st["size"]), st["color"], family, weight,
            anchor, _attrs(s), html.escape(g["text"]), title)
    raise ValueError(s.kind)
