"""One cell output as the model reads it: short, with nothing useful dropped, secrets masked.

- Text is **clipped before it is masked**: the head and tail are cut from the output first
  (never splitting a 20 MB line into a list), and only what is kept, with a margin on each
  side so a secret cut at the edge is still recognised whole, is masked. Work is linear in
  the size of the output and bounded by what is kept.
- An output's **text is kept beside its image**: a SymPy formula's LaTeX, a figure's plain
  text, a widget's fallback text.
- An HTML table (a styled DataFrame) becomes a **compact text table**.
- **Images are downscaled** for the model (a plot read at 512 pixels costs about a tenth of
  its full size in tokens); any image can be fetched larger, by output number.
- A **chart is read from its spec**, not from the script that draws it: a Plotly figure, a
  Vega-Lite or Vega chart (Altair) and a Bokeh plot become one or two lines (kind, title,
  traces or marks, axes or encodings, data sizes); the spec wins over its HTML and text
  fallbacks, and a static picture of it is still attached. HTML that is only scripts and
  styles says so in a few words. Every summary is bounded whatever the spec: sizes come
  from lengths (typed arrays are never decoded), walks stop after a fixed number of nodes,
  every title or name is clipped, and a spec that cannot be read gets a generic line.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import re
import struct
from collections import Counter, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from html import unescape
from html.parser import HTMLParser
from itertools import islice
from typing import Any

from .._wording import byte_size, plural, visible
from ..messages import ImageBlock, ImageSource
from ..secrets.shapes import mask_secrets

ANSI = re.compile(r"\x1b\[[0-9;?]{0,40}[ -/]{0,4}[@-~]|\x1b\][^\x07]{0,400}\x07")
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
WIDGET = "application/vnd.jupyter.widget-view+json"
MARGIN = 4_096
"""Characters beyond a cut that are masked with what is kept (the longest secret shapes)."""
MAX_PIXELS = 40_000_000
"""Pixels above which an image is described, never decoded (its header is read)."""
MAX_IMAGE_DATA = 30_000_000
"""Base64 characters above which an image is not decoded at all."""


@dataclass
class ViewLimits:
    """How much of each output (and source) a view shows."""

    output_head: int = 20
    output_tail: int = 5
    output_chars: int = 3_000
    source_lines: int = 300
    error_chars: int = 8_000
    images: int = 6
    """Images attached per call."""
    images_per_cell: int = 1
    """Images attached per cell (the others are listed, to fetch by output number)."""
    image_side: int = 512
    """Longest side, in pixels, of an attached image."""
    table_rows: int = 12


@dataclass
class ImageInfo:
    mime: str
    width: int | None
    height: int | None
    size: int


def strip_ansi(text: str) -> str:
    return ANSI.sub("", text)


def clip(text: str, head: int, tail: int, max_chars: int) -> str:
    """The first ``head`` and last ``tail`` lines of ``text`` within ``max_chars``, masked, with
    a note of what was left out. A large text is only read at its two ends (and a margin, so a
    secret cut at the edge is masked whole): the work does not grow with its size."""
    if len(text) <= 2 * (max_chars + MARGIN):
        return _trim(mask_secrets(text), head, tail, max_chars)
    half = max_chars // 2
    front = mask_secrets(text[: max_chars + MARGIN])
    back = mask_secrets(text[-(max_chars + MARGIN) :])
    front = _clipped_line(front[: _nth(front, head, half)], half, end=False)
    back = _clipped_line(back[_nth_from_end(back, tail, half) :], half, end=True)
    lines = text.count("\n") + (not text.endswith("\n"))
    omitted = max(0, lines - front.count("\n") - back.count("\n") - 1)
    what = f"{omitted:,} lines, " if omitted else ""
    chars = max(0, len(text) - len(front) - len(back))
    return f"{front.rstrip()}\n… {what}{chars:,} characters omitted …\n{back.lstrip()}"


def _trim(text: str, head: int, tail: int, max_chars: int) -> str:
    lines = text.splitlines()
    if len(lines) > head + tail:
        omitted = len(lines) - head - tail
        lines = [*lines[:head], f"… {omitted:,} lines omitted …", *(lines[-tail:] if tail else [])]
    out = "\n".join(lines)
    if len(out) > max_chars:
        keep = max_chars // 2
        out = f"{out[:keep]}\n… {len(out) - 2 * keep:,} characters omitted …\n{out[-keep:]}"
    return out


def _nth(text: str, n: int, limit: int) -> int:
    """Index just past the ``n``-th line of ``text`` (at most ``limit``)."""
    i = 0
    for _ in range(n):
        j = text.find("\n", i, limit)
        if j < 0:
            return min(limit, len(text))
        i = j + 1
    return i


def _nth_from_end(text: str, n: int, limit: int) -> int:
    """Index where the last ``n`` lines of ``text`` start (at most ``limit`` from the end)."""
    end = len(text) - text.endswith("\n")
    floor = max(0, len(text) - limit)
    for _ in range(n):
        j = text.rfind("\n", floor, end)
        if j < 0:
            return floor
        end = j
    return end + 1 if end < len(text) else end


def _clipped_line(text: str, limit: int, *, end: bool) -> str:
    if len(text) < limit:
        return text
    return "…" + text[-limit:] if end else text[:limit] + "…"


def as_text(value: Any) -> str:
    if isinstance(value, list):
        return "".join(v if isinstance(v, str) else str(v) for v in value)
    return value if isinstance(value, str) else json.dumps(value)


# --- one output --------------------------------------------------------------------------


def render_output(
    output: dict[str, Any],
    limits: ViewLimits,
    images: list[ImageBlock] | None,
    where: str = "",
) -> str:
    """One output as text; its image joins ``images`` (None: list images, attach none)."""
    kind = output.get("output_type")
    if kind == "stream":
        text = strip_ansi(as_text(output.get("text", "")))
        body = clip(text, limits.output_head, limits.output_tail, limits.output_chars)
        return f"{output.get('name', 'stdout')}:\n{body}"
    if kind == "error":
        return _error(output, limits)
    data = output.get("data") or {}
    if not isinstance(data, dict):
        return "[unreadable output]"
    parts = []
    image = next((m for m in IMAGE_TYPES if m in data), None)
    if image is not None:
        parts.append(
            _image(image, as_text(data[image]), limits, images, where, "text/latex" in data)
        )
    text = _best_text(data, limits, beside_image=image is not None)
    if text:
        parts.append(text)
    if not parts:
        parts.append("[" + ", ".join(sorted(data)) + " output]")
    label = "result" if kind == "execute_result" else "display"
    return f"{label}:\n" + "\n".join(parts)


def _error(output: dict[str, Any], limits: ViewLimits) -> str:
    traceback = output.get("traceback") or []
    text = strip_ansi("\n".join(t if isinstance(t, str) else str(t) for t in traceback))
    ename, evalue = output.get("ename"), as_text(output.get("evalue", ""))
    body = clip(text, 10_000, 0, limits.error_chars) if text else ""
    return f"error {ename}: {clip(evalue, 5, 2, 500)}" + (f"\n{body}" if body else "")


def _best_text(data: dict[str, Any], limits: ViewLimits, *, beside_image: bool) -> str:
    """The most useful text form of a rich output."""

    def clipped(text: str) -> str:
        return clip(text, limits.output_head, limits.output_tail, limits.output_chars)

    chart = chart_summary(data)
    if chart:
        return chart
    if WIDGET in data:
        plain = as_text(data.get("text/plain", "")).strip()
        return f"[widget] {clipped(plain)}" if plain else "[widget]"
    if "text/latex" in data:
        return "latex: " + clipped(as_text(data["text/latex"]).strip())
    html = as_text(data["text/html"]) if "text/html" in data and not beside_image else None
    first, bare = _html_reading(html, limits.table_rows) if html is not None else ("", None)
    if first:
        return first
    if "text/plain" in data:
        return clipped(strip_ansi(as_text(data["text/plain"])))
    if "text/markdown" in data:
        return clipped(as_text(data["text/markdown"]))
    if html is not None:
        return bare or _html_preview(html)
    if "application/json" in data:
        return clipped(json.dumps(data["application/json"], indent=1))
    if JAVASCRIPT in data:
        script = _text_of(data[JAVASCRIPT])
        return f"[JavaScript, {len(script):,} characters]" if script else "[JavaScript]"
    return ""


# --- HTML ----------------------------------------------------------------------------------


class _Table(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self.tables = 0
        self._cell: list[str] | None = None
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "table":
            self.tables += 1
        elif tag == "tr" and self.tables == 1:
            self.rows.append([])
        elif tag in ("td", "th") and self.rows:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.rows:
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        self.text.append(data)


def html_table(html: str, max_rows: int) -> str | None:
    """An HTML page's first table as aligned text (header, head and tail rows), or None."""
    if "<table" not in html[:100_000]:
        return None
    parser = _Table()
    parser.feed(html[:500_000])
    rows = [r for r in parser.rows if r]
    if not rows:
        return None
    total = len(rows)
    if total > max_rows + 1:
        rows = [*rows[: max_rows // 2 + 1], ["…"], *rows[-(max_rows // 2) :]]
    width = max(len(r) for r in rows)
    cells = [[c[:40] for c in r] + [""] * (width - len(r)) for r in rows]
    sizes = [max(len(r[i]) for r in cells) for i in range(width)]
    lines = [" ".join(c.ljust(sizes[i]) for i, c in enumerate(r)).rstrip() for r in cells]
    shape = f"[table, {total - 1:,} rows × {width} columns]"
    return mask_secrets(shape + "\n" + "\n".join(lines))


def _html_text(html: str) -> str:
    parser = _Table()
    parser.feed(html)
    return "".join(parser.text)


# --- charts: Plotly, Vega-Lite and Vega (Altair), Bokeh ------------------------------------

PLOTLY = "application/vnd.plotly.v1+json"
BOKEH_EXEC = "application/vnd.bokehjs_exec.v0+json"
BOKEH_LOAD = "application/vnd.bokehjs_load.v0+json"
JAVASCRIPT = "application/javascript"
_VEGA = re.compile(r"application/vnd\.vega(lite)?\.v[0-9.]{1,12}[+.]json")
"""Vega-Lite and Vega specs; Altair 6 names its type ``….v6.json``, the others ``….v5+json``."""
MAX_SPEC_TEXT = 4_000_000
"""Characters of JSON text (a spec stored as a string, a document inside a script) parsed at
most: larger ones are named, not read."""
MAX_TRACES = 1_000
"""Traces of a figure looked at; the rest are counted."""
MAX_NODES = 50_000
"""Nodes of a spec or document a walk visits at most."""
MAX_LABEL = 80
"""Characters of a title, name or field kept."""
MAX_FACT = 240
"""Characters of one part of a summary (the encodings, the axes) kept."""
_DATA_KEYS = (
    *("x", "y", "z", "values", "labels", "lat", "lon", "r", "theta", "a", "b", "c"),
    *("open", "close", "locations", "ids", "u", "v", "w"),
)
"""Trace attributes that hold one value a point: the longest is the trace's size."""
_ITEMSIZE = {"f8": 8, "f4": 4, "i4": 4, "u4": 4, "i2": 2, "u2": 2, "i1": 1, "u1": 1, "u1c": 1}
"""Bytes an item of a plotly typed array (``dtype``), as plotly.js reads them."""
_SUBPLOT_KEYS = ("scene", "geo", "polar", "ternary", "mapbox", "map", "smith", "subplot")
_AXIS = re.compile(r"([xy])axis([0-9]{0,4})")
_SCENE = re.compile(r"scene[0-9]{0,4}")
_LABEL_TAGS = re.compile(r"<[^<>]{0,200}>")
_KIND = re.compile(r"[A-Za-z0-9_]{1,30}")
_COMMA = re.compile(r"\s{0,500},")
_SPACES = re.compile(r"[ \t\r\n]*")


def chart_summary(data: dict[str, Any]) -> str | None:
    """A chart output read from its spec (Plotly, Vega-Lite, Vega, Bokeh), or None when the
    output carries none. Never raises: a spec that cannot be read gets a generic line."""
    if PLOTLY in data:
        return _safely(_plotly, lambda: _json_value(data[PLOTLY]), "[Plotly figure]")
    vega = next((m for m in islice(data, 50) if isinstance(m, str) and _VEGA.fullmatch(m)), None)
    if vega is not None:
        lite = "vegalite" in vega
        summarise = _vega_lite if lite else _vega
        fallback = "[Vega-Lite chart]" if lite else "[Vega chart]"
        return _safely(summarise, lambda: _json_value(data[vega]), fallback)
    if BOKEH_LOAD in data:
        return "[Bokeh loader script]"
    if BOKEH_EXEC in data:
        script = data.get(JAVASCRIPT, "")
        return _safely(_bokeh, lambda: _bokeh_doc(_text_of(script)), "[Bokeh plot]")
    return None


def _text_of(value: Any) -> str:
    """A text mime value: a string, or a list of lines (older files); anything else is no
    text (never serialised: it may be any size or depth)."""
    if isinstance(value, list):
        return "".join(v for v in value if isinstance(v, str))
    return value if isinstance(value, str) else ""


def _safely(summarise: Callable[[Any], str], read: Callable[[], Any], fallback: str) -> str:
    # A spec is whatever the kernel wrote: any shape, any size, any nesting. A summary that
    # fails says what the output is rather than break the read.
    try:
        spec = read()
        return fallback if spec is None else summarise(spec)
    except Exception:
        return fallback


def _json_value(value: Any) -> Any:
    """A JSON mime value as data: stored as an object, or (older files, unknown types) as a
    string or a list of lines; a text too large to parse reads as None."""
    if isinstance(value, (dict, list)) and not _is_lines(value):
        return value
    return _loads(_text_of(value))


def _is_lines(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value[:3])


def _loads(text: str, start: int = 0) -> Any:
    """The JSON value starting at ``start`` of ``text`` (what follows it is ignored), or None
    when there is none or it is longer than :data:`MAX_SPEC_TEXT`."""
    decoded = _decode(text, start)
    return decoded[0] if decoded else None


def _decode(text: str, start: int) -> tuple[Any, int] | None:
    """:func:`_loads`, with the index just past the value."""
    spaces = _SPACES.match(text, start)
    start = spaces.end() if spaces else start
    try:
        value, end = json.JSONDecoder().raw_decode(text[start : start + MAX_SPEC_TEXT])
    except (ValueError, RecursionError):
        return None
    return value, start + end


def _label(value: Any) -> str | None:
    """A title, name or field as a short single line (markup dropped, secrets masked,
    control characters escaped, at most :data:`MAX_LABEL` characters), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value) if abs(value) < 10**15 else None
    if isinstance(value, float):
        return f"{value:g}" if value == value and abs(value) != float("inf") else None
    if not isinstance(value, str):
        return None
    head = value[: MAX_LABEL * 4]
    text = " ".join(visible(mask_secrets(_LABEL_TAGS.sub(" ", head))).split())
    if len(text) > MAX_LABEL or (len(value) > len(head) and text):
        text = text[: MAX_LABEL - 1].rstrip() + "…"
    return text or None


def _title(value: Any) -> str | None:
    """A title given as a string, a list of lines, or an object with ``text``."""
    if isinstance(value, dict):
        value = value.get("text")
    if isinstance(value, list):
        value = " ".join(v for v in value[:5] if isinstance(v, str))
    return _label(value)


def _kind(value: Any) -> str:
    """A type name (a trace's, a mark's, a glyph's), at most 30 characters."""
    if isinstance(value, str) and _KIND.fullmatch(value):
        return value
    return (_label(value) or "unknown")[:30]


def _quoted(value: Any) -> str | None:
    label = _label(value)
    return f'"{label}"' if label else None


def _counts(counter: Counter[str], top: int = 6) -> str:
    """ "2 scatter, 1 bar" (the commonest first); "line, rule" when each is there once, and
    "scatter" when all are of one kind."""
    common = counter.most_common(top)
    once = len(common) == 1 or all(n == 1 for _, n in common)
    text = ", ".join(kind if once else f"{n:,} {kind}" for kind, n in common)
    rest = len(counter) - len(common)
    return text + (f", {plural(rest, 'other kind')}" if rest > 0 else "")


def _line(kind: str, title: str | None, facts: list[str]) -> str:
    head = f'{kind} "{title}"' if title else kind
    facts = [_short(f, MAX_FACT) for f in facts if f]
    return f"[{head}: " + "; ".join(facts) + "]" if facts else f"[{head}]"


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# Plotly ----------------------------------------------------------------------------------


def _plotly(spec: Any) -> str:
    if not isinstance(spec, dict):
        return "[Plotly figure]"
    layout = spec.get("layout")
    layout = layout if isinstance(layout, dict) else {}
    data = spec.get("data")
    traces = data if isinstance(data, list) else []
    seen = [t if isinstance(t, dict) else {} for t in traces[:MAX_TRACES]]
    kinds = Counter(_trace_type(t) for t in seen)
    sizes = [_trace_size(t) for t in seen]
    subplots = len({_subplot(t) for t in seen})
    frames = spec.get("frames")
    facts = [
        _traces_fact(len(traces), kinds, len(seen)),
        _plotly_axes(layout),
        f"{subplots:,} subplots" if subplots > 1 else "",
        _sizes_fact(sizes, len(traces) > len(seen)),
        plural(len(frames), "animation frame") if isinstance(frames, list) and frames else "",
    ]
    line = _line("Plotly figure", _title(layout.get("title")), facts)
    detail = _trace_list(seen, sizes) if len(traces) <= 5 else _trace_names(seen)
    return line + (f"\n{_short(detail, 3 * MAX_FACT)}" if detail else "")


def _trace_type(trace: dict[str, Any]) -> str:
    return _kind(trace.get("type", "scatter"))  # plotly.js draws a trace with none as scatter


def _traces_fact(total: int, kinds: Counter[str], looked: int) -> str:
    if not total:
        return "no traces"
    if looked < total:
        return f"{total:,} traces (the first {looked:,}: {_counts(kinds)})"
    return f"{plural(total, 'trace')} ({_counts(kinds)})"


def _subplot(trace: dict[str, Any]) -> tuple[Any, ...]:
    refs = [trace.get("xaxis") or "x", trace.get("yaxis") or "y"]
    refs += [trace.get(key) for key in _SUBPLOT_KEYS]
    return tuple(r if isinstance(r, str) else None for r in refs)


def _length(value: Any) -> tuple[int, ...] | None:
    """The shape of a data array from its length alone: a list (a list of lists is a grid),
    a typed array ``{"dtype", "bdata", "shape"}`` (plotly ≥ 6; its bytes are never decoded),
    an array with a ``shape`` (Bokeh)."""
    if isinstance(value, list):
        first = value[0] if value else None
        return (len(value), len(first)) if isinstance(first, list) else (len(value),)
    if not isinstance(value, dict):
        return None
    shape = _shape(value.get("shape"))
    if shape is not None:
        return shape
    raw, dtype = value.get("bdata"), value.get("dtype")
    if isinstance(raw, str) and isinstance(dtype, str) and dtype in _ITEMSIZE:
        size = len(raw) * 3 // 4 - raw[-2:].count("=")
        return (max(0, size) // _ITEMSIZE[dtype],)
    return None


def _shape(value: Any) -> tuple[int, ...] | None:
    """A shape given as "20, 30" (plotly) or [20, 30] (Bokeh, NumPy)."""
    if isinstance(value, str):
        value = value[:60].split(",")
    if not isinstance(value, list) or not value or len(value) > 8:
        return None
    try:
        dims = tuple(int(d) for d in value)
    except (TypeError, ValueError):
        return None
    return dims if all(0 <= d < 10**12 for d in dims) else None


def _trace_size(trace: dict[str, Any]) -> tuple[int, ...] | None:
    """Points in a trace (its longest data array), or the shape of its z grid."""
    grid = _length(trace.get("z"))
    if grid is not None and len(grid) > 1:
        return grid
    lengths = [s[0] for s in (_length(trace.get(k)) for k in _DATA_KEYS) if s]
    return (max(lengths),) if lengths else None


def _shape_text(shape: tuple[int, ...]) -> str:
    return "×".join(f"{d:,}" for d in shape)


def _size_text(size: tuple[int, ...] | None) -> str:
    if size is None:
        return ""
    return plural(size[0], "point") if len(size) == 1 else f"z {_shape_text(size)}"


def _sizes_fact(sizes: list[tuple[int, ...] | None], partial: bool) -> str:
    points = sum(s[0] for s in sizes if s is not None and len(s) == 1)
    grids = [s for s in sizes if s is not None and len(s) > 1]
    parts = [plural(points, "point")] if points else []
    if len(grids) == 1:
        parts.append(f"z {_shape_text(grids[0])}")
    elif grids:
        parts.append(f"{len(grids):,} z grids, the first {_shape_text(grids[0])}")
    text = ", ".join(parts)
    return f"{text} in the first {len(sizes):,} traces" if text and partial else text


def _plotly_axes(layout: dict[str, Any]) -> str:
    """Axis titles: x, x2… and y, y2… (one title said once), and the axes of 3D scenes."""
    titles: dict[str, list[str]] = {"x": [], "y": [], "z": []}
    for key in islice(layout, 2_000):
        if not isinstance(key, str):
            continue
        axis = _AXIS.fullmatch(key)
        if axis:
            _add_axis_title(titles[axis.group(1)], layout[key])
        elif _SCENE.fullmatch(key) and isinstance(layout[key], dict):
            for letter in "xyz":
                _add_axis_title(titles[letter], layout[key].get(f"{letter}axis"))
    parts = []
    for letter, names in titles.items():
        if names:
            shown = ", ".join(f'"{n}"' for n in names[:3])
            parts.append(f"{letter}: {shown}" + (" …" if len(names) > 3 else ""))
    return ", ".join(parts)


def _add_axis_title(titles: list[str], axis: Any) -> None:
    title = _title(axis.get("title")) if isinstance(axis, dict) else None
    if title and title not in titles and len(titles) < 4:
        titles.append(title)


def _trace_list(traces: list[dict[str, Any]], sizes: list[tuple[int, ...] | None]) -> str:
    """Each of a few traces: type, name, size (nothing when one unnamed trace says no more)."""
    names = [_quoted(t.get("name")) for t in traces]
    if not any(names) and (len(traces) < 2 or not any(sizes)):
        return ""
    items = []
    for trace, name, size in zip(traces, names, sizes, strict=True):
        what = " ".join(w for w in (_trace_type(trace), name) if w)
        items.append(", ".join(w for w in (what, _size_text(size)) if w))
    return "traces: " + "; ".join(items)


def _trace_names(traces: list[dict[str, Any]]) -> str:
    """The distinct names of many traces (a legend), the first few of them."""
    names: dict[str, None] = {}
    for trace in traces:
        name = trace.get("name")
        if isinstance(name, str) and name.strip():
            names.setdefault(name[: MAX_LABEL * 4])
    shown = [q for q in (_quoted(n) for n in islice(names, 8)) if q]
    if not shown:
        return ""
    more = len(names) - len(shown)
    return "names: " + ", ".join(shown) + (f" and {more:,} more" if more > 0 else "")


# Vega-Lite and Vega ------------------------------------------------------------------------

_COMPOSE = ("layer", "hconcat", "vconcat", "concat")


def _vega_lite(spec: Any) -> str:
    if not isinstance(spec, dict):
        return "[Vega-Lite chart]"
    marks: Counter[str] = Counter()
    encodings: list[str] = []
    for view in _views(spec):
        mark = view.get("mark")
        mark = mark.get("type") if isinstance(mark, dict) else mark
        if mark is not None:
            marks[_kind(mark)] += 1
        encoding = view.get("encoding")
        if isinstance(encoding, dict):
            _add_encodings(encodings, encoding)
    shown = ", ".join(encodings[:8]) + (" …" if len(encodings) > 8 else "")
    facts = [_composition(spec), _counts(marks) if marks else "", shown, _vl_rows(spec)]
    return _line("Vega-Lite chart", _title(spec.get("title")), facts)


def _views(spec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The views of a chart, composed ones included (bounded in number and depth)."""
    queue: deque[tuple[dict[str, Any], int]] = deque([(spec, 0)])
    visited = 0
    while queue and visited < 200:
        view, depth = queue.popleft()
        visited += 1
        yield view
        if depth >= 10:
            continue
        children: list[Any] = [view.get("spec")]
        for key in _COMPOSE:
            inner = view.get(key)
            children += inner[:50] if isinstance(inner, list) else []
        queue.extend((c, depth + 1) for c in children if isinstance(c, dict))


def _composition(spec: dict[str, Any]) -> str:
    for key in _COMPOSE:
        views = spec.get(key)
        if isinstance(views, list):
            return f"{key} of {len(views):,}"
    facet = spec.get("facet")
    if isinstance(facet, dict) and "spec" in spec:
        channels = {k: v for k, v in islice(facet.items(), 4) if isinstance(v, dict)}
        if channels:
            return "faceted by " + ", ".join(
                f"{_field(v) or '?'} ({_label(k)})" for k, v in channels.items()
            )
        return f"faceted by {_field(facet) or '?'}"
    repeat = spec.get("repeat")
    if isinstance(repeat, dict):
        views = sum(len(r) for r in islice(repeat.values(), 4) if isinstance(r, list))
        return f"repeat of {views:,}"
    return f"repeat of {len(repeat):,}" if isinstance(repeat, list) else ""


def _field(encoding: dict[str, Any]) -> str | None:
    """An encoding's field as Vega-Lite writes it: "revenue", "mean(revenue)", "count()"."""
    field = encoding.get("field")
    name = "repeat" if isinstance(field, dict) else _label(field)
    aggregate, unit = _label(encoding.get("aggregate")), _label(encoding.get("timeUnit"))
    if aggregate:
        name = f"{aggregate}({name or ''})"
    if unit and name:
        name = f"{unit}({name})"
    return name


def _add_encodings(encodings: list[str], encoding: dict[str, Any]) -> None:
    channels = sorted(islice(encoding.items(), 30), key=lambda item: item[0] not in ("x", "y"))
    for channel, value in channels:
        channel = (_label(channel) or "?")[:30]
        if isinstance(value, list):
            fields = [f for f in (_field(v) for v in value[:4] if isinstance(v, dict)) if f]
            text = f"{channel}: {', '.join(fields[:3])}" if fields else ""
        elif isinstance(value, dict):
            text = _encoding(channel, value)
        else:
            text = ""
        if text and text not in encodings and len(encodings) < 20:
            encodings.append(text)


def _encoding(channel: str, value: dict[str, Any]) -> str:
    name = _field(value)
    if not name:
        return ""
    notes = [n for n in (_label(value.get("type")), _quoted(value.get("title"))) if n]
    return f"{channel}: {name}" + (f" ({', '.join(notes)})" if notes else "")


def _vl_rows(spec: dict[str, Any]) -> str:
    sets = spec.get("datasets")
    if isinstance(sets, dict) and sets:
        rows = sum(len(v) for v in islice(sets.values(), 100) if isinstance(v, list))
        many = f" in {len(sets):,} datasets" if len(sets) > 1 else ""
        return plural(rows, "data row") + many
    return _data_rows(spec.get("data"))


def _data_rows(data: Any) -> str:
    if not isinstance(data, dict):
        return ""
    if isinstance(data.get("values"), list):
        return plural(len(data["values"]), "data row")
    url = _quoted(data.get("url"))
    return f"data from {url}" if url else ""


def _vega(spec: Any) -> str:
    if not isinstance(spec, dict):
        return "[Vega chart]"
    marks: Counter[str] = Counter()
    top = spec.get("marks")
    queue: deque[Any] = deque(top[:100] if isinstance(top, list) else [])
    visited = 0
    while queue and visited < 500:
        mark = queue.popleft()
        visited += 1
        if isinstance(mark, dict):
            marks[_kind(mark.get("type"))] += 1
            inner = mark.get("marks")
            queue.extend(inner[:100] if isinstance(inner, list) else [])
    axes = _list(spec.get("axes"))
    titles = [t for t in (_title(a.get("title")) for a in axes[:10] if isinstance(a, dict)) if t]
    sets = _list(spec.get("data"))
    rows = sum(len(d["values"]) for d in sets[:100] if _has_values(d))
    facts = [
        f"marks: {_counts(marks)}" if marks else "",
        "axes: " + ", ".join(f'"{t}"' for t in titles[:4]) if titles else "",
        f"{plural(len(sets), 'data set')}, {plural(rows, 'row')}" if sets else "",
    ]
    return _line("Vega chart", _title(spec.get("title")), facts)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _has_values(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("values"), list)


# Bokeh -----------------------------------------------------------------------------------

_BOKEH_PLOTS = ("Figure", "Plot", "GMap", "GMapPlot")
_BOKEH_JSON = re.compile(r"""<script[^<>]{0,200}type=["']application/json["'][^<>]{0,200}>""")


def _bokeh_doc(script: str) -> Any:
    """The document a Bokeh script embeds: ``docs_json = {…}`` (notebook output, Bokeh 2
    and 3), or a JS string of it (``components``), or None."""
    at = script.find("docs_json = ")
    if at < 0:
        return None
    at += len("docs_json = ")
    if script.startswith("'", at):
        end = script.find("'", at + 1)
        if end < 0 or end - at > MAX_SPEC_TEXT:
            return None
        # Bokeh writes it HTML-escaped, its ' as &#x27; and its backslashes doubled
        return _loads(unescape(script[at + 1 : end].replace("\\\\", "\\")))
    return _loads(script, at)


def _bokeh_html_doc(html: str) -> Any:
    """The document of a Bokeh page: in a ``<script type="application/json">`` (``file_html``,
    HTML-escaped), else in a script's ``docs_json``."""
    tag = _BOKEH_JSON.search(html)
    if tag is not None:
        end = html.find("</script>", tag.end())
        if 0 <= end - tag.end() <= MAX_SPEC_TEXT:
            return _loads(unescape(html[tag.end() : end]))
    return _bokeh_doc(html)


Model = tuple[str, dict[str, Any]]


def _bokeh(doc: Any) -> str:
    models, by_id = _bokeh_models(doc)

    def resolve(ref: Any) -> Model | None:
        if not isinstance(ref, dict):
            return None
        cls = _bokeh_class(ref)
        if cls is not None:
            attributes = ref.get("attributes")
            return cls, attributes if isinstance(attributes, dict) else {}
        return by_id.get(str(ref.get("id")))

    figures = [attrs for cls, attrs in models if cls in _BOKEH_PLOTS]
    glyphs: Counter[str] = Counter()
    for cls, attrs in models:
        glyph = resolve(attrs.get("glyph")) if cls == "GlyphRenderer" else None
        if glyph is not None:
            glyphs[_kind(glyph[0]).lower()] += 1
    first = figures[0] if figures else {}
    title = resolve(first.get("title"))
    rows = sum(_bokeh_rows(attrs.get("data")) for cls, attrs in models if cls == "ColumnDataSource")
    facts = [
        f"{len(figures):,} plots" if len(figures) > 1 else "",
        f"{plural(glyphs.total(), 'glyph')} ({_counts(glyphs)})" if glyphs else "",
        _bokeh_axes(first, resolve),
        plural(rows, "data row") if rows else "",
    ]
    text = title[1].get("text") if title else first.get("title")
    return _line("Bokeh plot", _title(text), facts)


def _bokeh_class(node: dict[str, Any]) -> str | None:
    kind, name = node.get("type"), node.get("name")
    if kind == "object" and isinstance(name, str):
        return name  # Bokeh 3: {"type": "object", "name": "Figure", "id", "attributes"}
    if isinstance(kind, str) and "id" in node and "attributes" in node:
        return kind  # Bokeh 2: {"type": "Figure", "id", "attributes"}
    return None


def _bokeh_models(doc: Any) -> tuple[list[Model], dict[str, Model]]:
    """Every model in a Bokeh document (breadth first, at most :data:`MAX_NODES` nodes), and
    those with an id by id (Bokeh 2 refers to models by id alone)."""
    models: list[Model] = []
    by_id: dict[str, Model] = {}
    queue: deque[Any] = deque([doc])
    visited = 0
    while queue and visited < MAX_NODES:
        node = queue.popleft()
        visited += 1
        if isinstance(node, list):
            if len(node) > 1_000 and not isinstance(node[0], (dict, list)):
                continue  # a column of numbers
            queue.extend(v for v in node[:10_000] if isinstance(v, (dict, list)))
            continue
        if not isinstance(node, dict):
            continue
        cls = _bokeh_class(node)
        if cls is not None:
            attributes = node.get("attributes")
            model = (cls, attributes if isinstance(attributes, dict) else {})
            models.append(model)
            by_id.setdefault(str(node.get("id")), model)
        queue.extend(v for v in islice(node.values(), 200) if isinstance(v, (dict, list)))
    return models, by_id


def _bokeh_axes(figure: dict[str, Any], resolve: Callable[[Any], Model | None]) -> str:
    parts = []
    for letter, sides in (("x", ("below", "above")), ("y", ("left", "right"))):
        labels: list[str] = []
        for side in sides:
            axes = figure.get(side)
            for axis in axes[:4] if isinstance(axes, list) else []:
                model = resolve(axis)
                label = _quoted(model[1].get("axis_label")) if model else None
                if label and label not in labels:
                    labels.append(label)
        if labels:
            parts.append(f"{letter}: {', '.join(labels[:2])}")
    return ", ".join(parts)


def _bokeh_rows(data: Any) -> int:
    """Rows of a ColumnDataSource: its longest column (Bokeh 3 writes the columns as a
    ``{"type": "map", "entries": [[name, column], …]}``, Bokeh 2 as an object)."""
    if isinstance(data, dict) and isinstance(data.get("entries"), list):
        columns = [e[1] for e in data["entries"][:200] if isinstance(e, list) and len(e) == 2]
    elif isinstance(data, dict):
        columns = list(islice(data.values(), 200))
    else:
        return 0
    return max(((_length(c) or (0,))[0] for c in columns), default=0)


# HTML without text -------------------------------------------------------------------------

_HIDDEN = ("script", "style", "title", "noscript", "template")
"""Elements whose content a reader never sees as text."""
_NAME_END = re.compile(r"[\s/>]")
MAX_BLOCKS = 5_000
"""Elements (and look-alikes) an HTML scan steps over before it takes the HTML as content."""
_TAG = re.compile(r"<[^<>]*>")
_PLOTLY_CALL = re.compile(
    r"""Plotly\.newPlot\(\s{0,200}["'][^"'<>]{0,200}["']\s{0,200},\s{0,200}"""
)
_TEXT_SCAN = 200_000
"""Characters between scripts looked at for visible text; a longer stretch counts as text."""


def _html_reading(html: str, table_rows: int) -> tuple[str, str | None]:
    """An HTML output read as (what wins over its text/plain: its table, or the chart its
    scripts draw, read from the spec inside them (Altair's HTML, plotly's); what stands in
    for HTML that shows no text, in a few words, when there is no plain text). ("", None):
    HTML with text, shown as it always was."""
    table = html_table(html, table_rows)
    if table is not None:
        return table, None
    scripts, styles, has_text = _html_parts(html)
    if has_text:
        return "", None
    chart = _safely(_html_chart, lambda: html, "")
    if chart:
        return chart, None
    what = {
        (True, True): "scripts and styles only",
        (True, False): "scripts only",
        (False, True): "styles only",
    }.get((scripts > 0, styles > 0), "no visible text")
    return "", f"[HTML: {what}, {len(html):,} characters]"


def _html_preview(html: str) -> str:
    plain = " ".join(_html_text(html[:200_000]).split())
    return f"[HTML, {len(html):,} characters] " + mask_secrets(plain[:300])


def _html_parts(html: str) -> tuple[int, int, bool]:
    """Scripts and style sheets in ``html``, and whether anything outside them (and outside
    tags and comments) is text a reader sees. Linear in the size of the HTML: ``str.find``
    on a lower-cased copy (a regex tried at every ``<`` is a hundred times slower)."""
    low = html.lower()
    if len(low) != len(html):  # "İ" is the one character whose lower case is two
        low = html.replace("\u0130", "I").lower()
    upcoming = dict.fromkeys(_HIDDEN, -1)
    scripts = styles = at = 0
    for _ in range(MAX_BLOCKS):
        for name, where in upcoming.items():
            if where < at:
                found = low.find(f"<{name}", at)
                upcoming[name] = len(low) if found < 0 else found
        name = min(upcoming, key=lambda n: upcoming[n])
        start = upcoming[name]
        if _has_text(html, at, start):
            return scripts, styles, True
        if start == len(low):
            return scripts, styles, False
        if not _NAME_END.match(low, start + len(name) + 1):
            # <titlebar>, <scripts>: another element, markup to scan with what follows it
            found = low.find(f"<{name}", start + 1)
            upcoming[name] = len(low) if found < 0 else found
            at = start
            continue
        scripts += name == "script"
        styles += name == "style"
        opened = low.find(">", start)
        close = low.find(f"</{name}", opened) if opened >= 0 else -1
        closed = low.find(">", close) if close >= 0 else -1
        if closed < 0:
            return scripts, styles, False  # unclosed: the rest is inside it
        at = closed + 1
    return scripts, styles, True  # too many to be sure: taken as content


def _has_text(html: str, start: int, end: int) -> bool:
    if end - start > _TEXT_SCAN:
        return True  # too long to be sure it is all markup: treat it as content
    part = html[start:end]
    pieces = []
    at = 0
    while (comment := part.find("<!--", at)) >= 0:
        pieces.append(part[at:comment])
        close = part.find("-->", comment + 4)
        at = len(part) if close < 0 else close + 3
    pieces.append(part[at:])
    return bool(unescape(_TAG.sub(" ", "".join(pieces))).strip())


def _html_chart(html: str) -> str:
    """The chart a page of scripts draws, read from the spec inside it; "" if none."""
    call = _PLOTLY_CALL.search(html) if "Plotly.newPlot" in html else None
    traces = _decode(html, call.end()) if call is not None else None
    if traces is not None and isinstance(traces[0], list):
        # Plotly.newPlot("id", [traces], {layout}, {config})
        comma = _COMMA.match(html, traces[1])
        layout = _loads(html, comma.end()) if comma else None
        return _plotly({"data": traces[0], "layout": layout})
    if "plotly-graph-div" in html:
        return "[Plotly figure]"
    if "vegaEmbed" in html or "vega-embed" in html:
        call_at = html.rfind("})(")  # Altair: (function(spec, embedOpt){…})({spec}, {…});
        spec = _loads(html, call_at + 3) if call_at >= 0 else None
        if isinstance(spec, dict) and ("marks" in spec and "mark" not in spec):
            return _vega(spec)
        return _vega_lite(spec) if isinstance(spec, dict) else "[Vega-Lite chart]"
    if "data-root-id" in html or "bk-root" in html or "docs_json" in html:
        doc = _bokeh_html_doc(html)
        return _bokeh(doc) if doc is not None else "[Bokeh plot]"
    return ""


# --- images ------------------------------------------------------------------------------


def image_info(mime: str, data: str) -> ImageInfo:
    """Type, pixel size (PNG and GIF from their header) and byte size, without decoding."""
    size = len(data) * 3 // 4
    try:
        head = base64.b64decode(data[:64] + "=" * (-len(data[:64]) % 4))
    except (binascii.Error, ValueError):
        return ImageInfo(mime, None, None, size)
    if mime == "image/png" and head[:8] == b"\x89PNG\r\n\x1a\n" and len(head) >= 24:
        width, height = struct.unpack(">II", head[16:24])
        return ImageInfo(mime, width, height, size)
    if mime == "image/gif" and head[:3] == b"GIF" and len(head) >= 10:
        width, height = struct.unpack("<HH", head[6:10])
        return ImageInfo(mime, width, height, size)
    return ImageInfo(mime, None, None, size)


def describe_image(info: ImageInfo) -> str:
    kind = info.mime.split("/")[1]
    pixels = f" {info.width}×{info.height}" if info.width else ""
    return f"{kind}{pixels}, {byte_size(info.size)}"


FORMULA_HEIGHT = 150
"""A picture this low beside LaTeX is the formula rendered: its LaTeX says it all."""


def _image(
    mime: str,
    data: str,
    limits: ViewLimits,
    images: list[ImageBlock] | None,
    where: str,
    has_latex: bool = False,
) -> str:
    data = "".join(data.split()) if len(data) < MAX_IMAGE_DATA else data
    info = image_info(mime, data)
    about = describe_image(info)
    fetch = f"; read_cell({where}) shows it" if where else ""
    if has_latex and info.height is not None and info.height <= FORMULA_HEIGHT:
        images = None
    if images is None:
        return f"[image {about}{fetch}]"
    if len(images) >= limits.images:
        return f"[image {about} — not attached (at most {limits.images} per call){fetch}]"
    block = downscale(mime, data, limits.image_side)
    if block is None:
        return f"[image {about} — unreadable or too large to attach]"
    images.append(block)
    return f"[image {about} — attached as image {len(images)}]"


def downscale(mime: str, data: str, side: int) -> ImageBlock | None:
    """The image as an attachment whose longest side is at most ``side`` pixels."""
    if len(data) > MAX_IMAGE_DATA:
        return None
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    from PIL import Image  # imported on first use: most reads attach no image

    try:
        with Image.open(io.BytesIO(raw)) as img:  # reads the header only
            if img.size[0] * img.size[1] > MAX_PIXELS:
                return None  # a few bytes can claim a vast image: never decode one
            if max(img.size) <= side and mime in ("image/png", "image/jpeg"):
                return ImageBlock(source=ImageSource(media_type=mime, data=data))
            img.thumbnail((side, side))
            out = io.BytesIO()
            if img.mode in ("RGBA", "LA", "P") or mime != "image/jpeg":
                img.save(out, format="PNG", optimize=True)
                media = "image/png"
            else:
                img.convert("RGB").save(out, format="JPEG", quality=85)
                media = "image/jpeg"
    except Exception:  # a broken or hostile image: describe it instead
        return None
    return ImageBlock(
        source=ImageSource(media_type=media, data=base64.b64encode(out.getvalue()).decode())
    )
