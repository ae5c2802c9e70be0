"""Charts from plain-data specs, drawn with matplotlib's object API (no pyplot state).

SVG for HTML (vector), PNG for Markdown (what issue trackers accept) and for PDF (WeasyPrint lays
out raster images faster and as crisply in print at the DPI used).
Both are byte-stable: fixed SVG hash salt, no dates in metadata.
"""

from __future__ import annotations

import functools
import hashlib
import io
import itertools
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from advisor.core import units as fmt

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

STYLE: dict[RcKeyType, Any] = {
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "svg.hashsalt": "advisor",
    "svg.fonttype": "path",  # text as paths: the same picture wherever it is opened
}
COLOURS = {"main": "#2f6690", "accent": "#d1495b", "muted": "#9aa5b1", "good": "#3a7d44", "grid": "#e4e7eb"}
SIZE = (6.4, 3.0)
# What a chart is given is data, and odd data must neither warn on stderr nor fail the report. Within
# these bounds matplotlib draws without a warning: a longer label leaves the axes no room ("constrained_layout
# not applied"), larger magnitudes overflow its limits and transforms, smaller ones reach zero on a log axis.
MAX_LABEL = 48  # characters; the kinds already cut kernel names here
MAGNITUDE = 1e100
REPLACEMENT = "\ufffd"  # drawn for a character the font lacks (matplotlib would warn and draw an empty box)


@functools.cache
def _glyphs() -> frozenset[int]:
    from matplotlib import font_manager, ft2font

    return frozenset(ft2font.FT2Font(font_manager.findfont(STYLE["font.family"])).get_charmap())


def drawable(value: Any) -> Any:
    """The spec with its texts in characters the font has (control characters too are replaced: a label
    is one line), each at most MAX_LABEL long and never read as mathtext, and its numbers finite and within
    MAGNITUDE (NaN is 0). The report's tables beside a chart keep the exact names and values."""
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAGNITUDE:
        return MAGNITUDE if value > 0 else -MAGNITUDE  # an int past float range fails matplotlib's conversion
    if isinstance(value, float):
        if math.isnan(value) or value == 0:
            return 0.0
        size = min(max(abs(value), 1 / MAGNITUDE), MAGNITUDE)
        return math.copysign(size, value)
    if isinstance(value, dict):
        return {k: drawable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [drawable(v) for v in value]
    return value


def _text(value: str) -> str:
    glyphs = _glyphs()
    text = "".join(c if ord(c) in glyphs else REPLACEMENT for c in value[:MAX_LABEL + 1])
    text = text if len(text) <= MAX_LABEL else text[:MAX_LABEL - 1] + "…"
    return text.replace("$", r"\$")  # a dollar sign, not TeX: `$\x$` in a name would fail the report


def _lines(*lines: str) -> str:
    """A text the chart writes from its numbers (1e100 in fixed notation is 100 digits), as drawable."""
    return "\n".join(_text(line) for line in lines)


def _positive(top: float) -> float:
    """An upper axis limit above the lower one at 0 (all-zero data would give matplotlib an empty range)."""
    return top if top > 0 else 1.0


def _figure(height: float = SIZE[1]):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(SIZE[0], height), layout="constrained")
    return fig, fig.add_subplot()


def _hbar(spec: dict[str, Any]):
    labels, values = spec["labels"], spec["values"]
    fig, ax = _figure(max(1.6, 0.42 * len(labels) + 0.8))
    positions = list(range(len(labels)))[::-1]
    colours = [COLOURS["accent"] if i == spec.get("highlight") else COLOURS["main"] for i in range(len(labels))]
    ax.barh(positions, values, color=colours, height=0.6)
    ax.set_yticks(positions, labels)
    ax.set_xlim(0, _positive(spec.get("xmax", max(values, default=0) * 1.15)))
    ax.set_xlabel(spec["xlabel"])
    ax.grid(axis="x", color=COLOURS["grid"], linewidth=0.6)
    ax.set_axisbelow(True)
    for y, value, text in zip(positions, values, spec["texts"], strict=True):
        ax.text(value, y, f"  {text}", va="center", fontsize=8)
    return fig


def _byte_axis(ax, top: float) -> None:
    """Ticks at round binary steps (16, 32, 48 MiB ...), labelled like every byte size in the report."""
    from matplotlib.ticker import FuncFormatter, MultipleLocator

    unit = next((u for u in (2**30, 2**20, 2**10) if top >= u), 1)
    # never under a byte: a step of 2^-29 over a range matplotlib widens to ±0.05 is 50 million ticks
    step = max(1.0, unit * 2 ** math.ceil(math.log2(max(top / 4 / unit, 1e-9))))
    ax.xaxis.set_major_locator(MultipleLocator(step))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: fmt.bytes_(x) if x else "0"))


def _byte_bars(spec: dict[str, Any]):
    """Byte counts on a linear axis (a 12× reload must look 12×), each bar labelled with its value."""
    labels, values = spec["labels"], spec["values"]
    fig, ax = _figure(max(1.6, 0.42 * len(labels) + 0.8))
    positions = list(range(len(labels)))[::-1]
    ax.barh(positions, values, color=COLOURS["main"], height=0.6)
    top = max([*values, 1.0])  # at least a byte: the axis counts whole bytes
    _byte_axis(ax, top)
    ax.set_yticks(positions, labels)
    ax.set_xlim(0, top * 1.3)
    ax.set_xlabel(spec["xlabel"])
    ax.grid(axis="x", color=COLOURS["grid"], linewidth=0.6)
    ax.set_axisbelow(True)
    for y, value in zip(positions, values, strict=True):
        ax.text(value, y, _lines(f"  {fmt.bytes_(value)}"), va="center", fontsize=8)
    return fig


def _roofline(spec: dict[str, Any]):
    # log axes: nothing at or below zero (the reports draw a roofline only for positive numbers anyway)
    peak, bandwidth, ai, achieved = (max(spec[k], 1 / MAGNITUDE) for k in ("peak", "bandwidth", "ai", "achieved"))
    ridge = peak / bandwidth
    lo = min(ai, ridge) / 20
    hi = max(ai, ridge) * 20
    xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    fig, ax = _figure(3.4)
    ax.loglog(xs, [min(peak, x * bandwidth) for x in xs], color=COLOURS["main"], linewidth=1.6,
              label="attainable (HBM × AI, capped by peak)")
    ax.axvline(ridge, color=COLOURS["muted"], linestyle="--", linewidth=1)
    ax.text(ridge / 1.08, peak * 1.25, _lines(f"ridge {ridge:.1f} FLOP/B"), ha="right", fontsize=8, color="#444444")
    ax.plot([ai], [achieved], "o", color=COLOURS["accent"], markersize=7, label="this kernel")
    ax.annotate(_lines(f"AI {ai:.1f} FLOP/B", fmt.rate(achieved, "FLOP/s")), (ai, achieved), textcoords="offset points",
                xytext=(8, -22), fontsize=8)
    ax.set_ylim(min(achieved, lo * bandwidth) / 3, peak * 2.5)
    ax.set_xlabel("arithmetic intensity (FLOP/B)")
    ax.set_ylabel("FLOP/s")
    ax.grid(which="major", color=COLOURS["grid"], linewidth=0.6)
    ax.legend(loc="lower right", fontsize=8, frameon=False)
    return fig


def _operator_roofline(spec: dict[str, Any]):
    """The device's roofline (the matrix units' peak and the ordinary pipes', the bandwidth) with one point per
    operator at its intensity and achieved FLOP/s, sized by its kernel time; the largest few labelled."""
    bandwidth = max(spec["bandwidth"], 1 / MAGNITUDE)
    peaks = [(str(label), max(value, 1 / MAGNITUDE)) for label, value in spec["peaks"]]
    points = [(str(p["label"]), max(p["ai"], 1 / MAGNITUDE), max(p["achieved"], 1 / MAGNITUDE), max(p["time"], 0.0))
              for p in spec["points"]]
    top = max(v for _, v in peaks)
    ais = [ai for _, ai, _, _ in points] + [v / bandwidth for _, v in peaks]
    lo, hi = min(ais) / 10, max(ais) * 10
    xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    fig, ax = _figure(3.8)
    styles = ("-", "--", ":")
    for (label, peak), style in zip(peaks, styles, strict=False):
        ax.loglog(xs, [min(peak, x * bandwidth) for x in xs], color=COLOURS["main"], linewidth=1.4, linestyle=style,
                  label=_text(f"{label}: {fmt.rate(peak, 'FLOP/s')}"))
    largest = max((t for *_, t in points), default=1.0) or 1.0
    ax.scatter([ai for _, ai, _, _ in points], [a for _, _, a, _ in points],
               s=[20 + 280 * t / largest for *_, t in points], color=COLOURS["accent"], alpha=0.6, linewidths=0)
    for i, (label, ai, achieved, _) in enumerate(points[:5]):  # staggered: close points' labels do not overprint
        ax.annotate(_text(label), (ai, achieved), textcoords="offset points", xytext=(8, 14 - 11 * i), fontsize=7,
                    arrowprops={"arrowstyle": "-", "color": COLOURS["muted"], "linewidth": 0.5})
    ax.set_ylim(min(a for _, _, a, _ in points) / 5 if points else top / 1e4, top * 3)
    ax.set_xlabel("arithmetic intensity (FLOP/B)")
    ax.set_ylabel("FLOP/s")
    ax.grid(which="major", color=COLOURS["grid"], linewidth=0.6)
    ax.legend(loc="lower right", fontsize=7, frameon=False)
    return fig


def _amdahl(spec: dict[str, Any]):
    f, measured_s, measured = spec["fraction"], spec["step_speedup"], spec["measured"]
    top = max(100.0, (measured_s or 1) * 4, (spec.get("needed") or 1) * 2)
    xs = [1 * top ** (i / 300) for i in range(301)]
    fig, ax = _figure(3.2)
    ax.semilogx(xs, [1 / ((1 - f) + f / x) for x in xs], color=COLOURS["main"], linewidth=1.6,
                label=f"overall speedup, f = {f:.3f}")
    ceiling = spec.get("ceiling")
    if ceiling:
        ax.axhline(ceiling, color=COLOURS["muted"], linestyle="--", linewidth=1)
        ax.text(xs[-1], ceiling, _lines(f"ceiling {ceiling:.2f}×"), ha="right", va="bottom", fontsize=8)
    target = spec.get("target")
    if target:
        ax.axhline(target, color=COLOURS["accent"], linestyle=":", linewidth=1)
        ax.text(1.05, target, _lines(f"target {target:.2f}×"), va="bottom", fontsize=8, color=COLOURS["accent"])
    if measured_s and measured:
        ax.plot([measured_s], [measured], "o", color=COLOURS["accent"], markersize=7,
                label=_lines(f"measured: step {measured_s:.3g}×, overall {measured:.3g}×"))
    from matplotlib.ticker import FuncFormatter

    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}×"))
    ax.set_xlabel("speedup of the changed steps (s)")
    ax.set_ylabel("overall speedup")
    ax.set_ylim(0.9, max(target or 0, ceiling or 0, measured or 0, 1.1) * 1.12)
    ax.grid(color=COLOURS["grid"], linewidth=0.6)
    ax.legend(loc="center right", fontsize=8, frameon=False)
    return fig


DRAW: dict[str, Callable[[dict[str, Any]], Any]] = {
    "hbar": _hbar, "byte_bars": _byte_bars, "roofline": _roofline, "operator_roofline": _operator_roofline,
    "amdahl": _amdahl,
}


def svg(spec: dict[str, Any]) -> str:
    import matplotlib

    with matplotlib.rc_context(STYLE):
        fig = DRAW[spec["kind"]](drawable(spec))
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    text = buffer.getvalue()
    return text[text.index("<svg"):]  # drop the XML prolog and doctype: the SVG goes inline in HTML


def png(spec: dict[str, Any], dpi: int = 150, opaque: bool = False) -> bytes:
    """`opaque`: the same pixels as RGB, lightly compressed, for WeasyPrint, which decodes and
    re-encodes every image and splits an alpha channel out into a second image (for a chart on white)."""
    import matplotlib

    with matplotlib.rc_context(STYLE):
        fig = DRAW[spec["kind"]](drawable(spec))
        buffer = io.BytesIO()
        if not opaque:
            fig.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
            return buffer.getvalue()
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from PIL import Image

        fig.set_dpi(dpi)
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        rgba = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
        rgba.convert("RGB").save(buffer, format="png", compress_level=1)
    return buffer.getvalue()


@dataclass(frozen=True)
class ChartJob:
    """One chart to draw, as plain data (it may be drawn in another process)."""

    spec: dict[str, Any]
    format: str = "png"  # "png" or "svg"
    dpi: int = 150
    opaque: bool = False


def draw(job: ChartJob) -> bytes:
    return svg(job.spec).encode("utf-8") if job.format == "svg" else png(job.spec, job.dpi, job.opaque)


CHART_SCHEME = "advisor-chart:"  # a chart in the PDF's HTML, by key: the PDF renderer serves it (report/pdf.py)


def key(spec: dict[str, Any]) -> str:
    """A chart's identity: the same spec draws the same picture."""
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:10]


def warm_up() -> None:
    """What drawing needs loaded, loaded ahead of the first chart (in a drawing process)."""
    import matplotlib.backends.backend_agg
    import matplotlib.figure  # noqa: F401
    import PIL.Image  # noqa: F401


def finite(*values: float | None) -> bool:
    return all(v is not None and math.isfinite(v) for v in values)


def _grouped_hbar(spec: dict[str, Any]):
    """Before/after (or more) bars per label; `log` for byte counts spanning magnitudes."""
    labels, series = spec["labels"], spec["series"]
    fig, ax = _figure(max(1.8, 0.5 * len(labels) * max(1, len(series) / 2) + 0.9))
    height = 0.8 / len(series)
    palette = [COLOURS["muted"], COLOURS["main"], COLOURS["accent"], COLOURS["good"]]
    for i, s in enumerate(series):
        positions = [len(labels) - 1 - j + (len(series) / 2 - i - 0.5) * height for j in range(len(labels))]
        values = [v if v is not None else 0 for v in s["values"]]
        ax.barh(positions, values, height=height * 0.92, color=palette[i % len(palette)], label=s["name"])
    ax.set_yticks(list(range(len(labels)))[::-1], labels)
    if spec.get("bytes"):
        _byte_axis(ax, max(v or 0 for s in series for v in s["values"]))
    ax.set_xlabel(spec["xlabel"])
    ax.grid(axis="x", color=COLOURS["grid"], linewidth=0.6)
    ax.set_axisbelow(True)
    fig.legend(fontsize=8, frameon=False, loc="outside upper center", ncols=len(series))
    return fig


def _series(spec: dict[str, Any]):
    labels, values = spec["labels"], spec["values"]
    fig, ax = _figure(2.8)
    xs = list(range(len(labels)))
    ax.plot(xs, values, "-o", color=COLOURS["main"], linewidth=1.6, markersize=6)
    for x, v in zip(xs, values, strict=True):
        ax.annotate(spec["texts"][x], (x, v), textcoords="offset points", xytext=(0, 8), ha="center", fontsize=8)
    ax.set_xticks(xs, labels)
    ax.set_ylim(0, _positive(max(values, default=0) * 1.25))
    ax.set_ylabel(spec["ylabel"])
    ax.grid(axis="y", color=COLOURS["grid"], linewidth=0.6)
    return fig


DRAW.update({"grouped_hbar": _grouped_hbar, "series": _series})


def _timeline_chart(spec: dict[str, Any]):
    edges, rows = spec["edges"], spec["rows"]
    centres = [(a + b) / 2 * 1e3 for a, b in itertools.pairwise(edges)]
    fig, ax = _figure(3.0)
    palette = [COLOURS["main"], COLOURS["accent"], COLOURS["good"], "#e0a458", "#7b6d8d", COLOURS["muted"], "#333333"]
    for i, (name, values) in enumerate(rows.items()):
        ax.plot(centres, [100 * v for v in values], linewidth=1.2, color=palette[i % len(palette)], label=name)
    ax.set_ylim(0, 105)
    ax.set_xlabel("time from profile start (ms)")
    ax.set_ylabel("busy (%)")
    ax.grid(color=COLOURS["grid"], linewidth=0.6)
    if rows:  # an empty legend is a warning
        fig.legend(fontsize=7, frameon=False, loc="outside upper center", ncols=min(4, len(rows)))
    return fig


DRAW["timeline"] = _timeline_chart


def _line(spec: dict[str, Any]):
    """One value per item in order (a sequence's span): many points, so no per-point labels."""
    values = spec["values"]
    fig, ax = _figure(2.6)
    xs = list(range(len(values)))
    ax.plot(xs, values, "-", color=COLOURS["main"], linewidth=1.2, marker="o" if len(values) <= 40 else None,
            markersize=3)
    ax.set_ylim(0, max(values) * 1.15 if values and max(values) > 0 else 1)
    ax.set_xlabel(spec["xlabel"])
    ax.set_ylabel(spec["ylabel"])
    ax.grid(color=COLOURS["grid"], linewidth=0.6)
    return fig


DRAW["line"] = _line


def _histogram(spec: dict[str, Any]):
    """Small multiples: one panel per distribution, each with counts per bin (`edges` has one more entry
    than `counts`), a title (the metric), the unit as x label and `log` for log-spaced bins on a log axis."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    panels = spec["panels"]
    columns = min(len(panels), spec.get("columns", 3))
    rows = math.ceil(len(panels) / columns)
    fig = Figure(figsize=(SIZE[0], 0.3 + 1.75 * rows), layout="constrained")
    axes = fig.subplots(rows, columns, squeeze=False).flatten()
    for ax, panel in zip(axes, panels, strict=False):
        edges = panel["edges"]
        ax.stairs(panel["counts"], edges, fill=True, color=COLOURS["main"], edgecolor="white", linewidth=0.8)
        if panel.get("log") and edges[0] > 0:  # a log axis cannot start at or below zero
            ax.set_xscale("log")
        if edges[-1] > edges[0]:  # one value: matplotlib widens the empty range itself, with a warning if asked to
            ax.set_xlim(edges[0], edges[-1])
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts of profiles
        ax.tick_params(labelsize=7)
        ax.set_title(panel["title"], fontsize=8)
        ax.set_xlabel(panel["xlabel"], fontsize=8)
        ax.grid(axis="y", color=COLOURS["grid"], linewidth=0.6)
        ax.set_axisbelow(True)
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    for ax in axes[::columns]:
        ax.set_ylabel(spec.get("ylabel", "profiles"), fontsize=8)
    return fig


DRAW["histogram"] = _histogram
