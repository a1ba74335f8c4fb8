"""A chart output read from its spec, not from the script that draws it.

A Plotly figure, a Vega-Lite or Vega chart (Altair) and a Bokeh plot become one or two lines
(kind, title, traces or marks, axes or encodings, data sizes), whether the spec comes in its
own mime type or inside the scripts of an HTML page. Every summary is bounded whatever the
spec: sizes come from lengths (typed arrays are never decoded), walks stop after a fixed
number of nodes, every title or name is clipped and masked, JSON text is parsed up to
:data:`MAX_SPEC_TEXT`, and a spec that cannot be read gets a generic line: reading one never
raises. Each reading comes in two lengths: the summary a cell's view shows, and the few
words the notebook's outline gives it (``plotly figure (3 traces)``).
"""

from __future__ import annotations

import json
import re
from collections import Counter, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from html import unescape
from itertools import islice
from typing import Any, TypeVar

from .._wording import plural, visible
from ..secrets.shapes import mask_secrets

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
_PLOTLY_CALL = re.compile(
    r"""Plotly\.newPlot\(\s{0,200}["'][^"'<>]{0,200}["']\s{0,200},\s{0,200}"""
)


@dataclass(frozen=True)
class Chart:
    """A chart output as read from its spec."""

    summary: str
    """What a cell's view shows: a line or two (kind, title, traces or marks, axes or
    encodings, data sizes)."""
    kind: str
    """What the outline shows: a few words ("plotly figure (3 traces)", "vega-lite chart")."""


# What a chart reads as when its spec cannot be read (Bokeh's loader has none to read)
_PLOTLY_FIGURE = Chart("[Plotly figure]", "plotly figure")
_VEGA_LITE_CHART = Chart("[Vega-Lite chart]", "vega-lite chart")
_VEGA_CHART = Chart("[Vega chart]", "vega chart")
_BOKEH_PLOT = Chart("[Bokeh plot]", "bokeh plot")
_BOKEH_LOADER = Chart("[Bokeh loader script]", "bokeh loader script")


def read_chart(data: dict[str, Any]) -> Chart | None:
    """A chart output read from its spec (Plotly, Vega-Lite, Vega, Bokeh), or None when the
    output carries none. Never raises: a spec that cannot be read gets a generic line."""
    if PLOTLY in data:
        return _safely(_plotly, lambda: _json_value(data[PLOTLY]), _PLOTLY_FIGURE)
    vega = next((m for m in islice(data, 50) if isinstance(m, str) and _VEGA.fullmatch(m)), None)
    if vega is not None:
        lite = "vegalite" in vega
        summarise = _vega_lite if lite else _vega
        fallback = _VEGA_LITE_CHART if lite else _VEGA_CHART
        return _safely(summarise, lambda: _json_value(data[vega]), fallback)
    if BOKEH_LOAD in data:
        return _BOKEH_LOADER
    if BOKEH_EXEC in data:
        script = data.get(JAVASCRIPT, "")
        return _safely(_bokeh, lambda: _bokeh_doc(text_of(script)), _BOKEH_PLOT)
    return None


def chart_in_html(html: str) -> Chart | None:
    """The chart an HTML page of scripts draws (plotly's ``Plotly.newPlot``, Altair's
    ``vegaEmbed``, a Bokeh document), read from the spec inside its scripts; None when it
    draws none. Never raises."""
    return _safely(_html_chart, lambda: html, None) if may_draw_chart(html) else None


_CHART_MARKS = (
    *("Plotly.newPlot", "plotly-graph-div", "vegaEmbed", "vega-embed"),
    *("data-root-id", "bk-root", "docs_json"),
)
"""What a chart library writes in its HTML: a page without any of them draws no chart."""


def may_draw_chart(html: str) -> bool:
    """Whether HTML holds what a chart library writes: a cheap test, before a scan for its
    visible text; :func:`chart_in_html` finds a chart only in such HTML."""
    return any(mark in html for mark in _CHART_MARKS)


def text_of(value: Any) -> str:
    """A text mime value: a string, or a list of lines (older files); anything else is no
    text (never serialised: it may be any size or depth)."""
    if isinstance(value, list):
        return "".join(v for v in value if isinstance(v, str))
    return value if isinstance(value, str) else ""


_Reading = TypeVar("_Reading")


def _safely(
    summarise: Callable[[Any], _Reading], read: Callable[[], Any], fallback: _Reading
) -> _Reading:
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
    return _loads(text_of(value))


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


def _plotly(spec: Any) -> Chart:
    if not isinstance(spec, dict):
        return _PLOTLY_FIGURE
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
    summary = line + (f"\n{_short(detail, 3 * MAX_FACT)}" if detail else "")
    count = plural(len(traces), "trace") if traces else "no traces"
    return Chart(summary, f"plotly figure ({count})")


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


def _vega_lite(spec: Any) -> Chart:
    if not isinstance(spec, dict):
        return _VEGA_LITE_CHART
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
    return Chart(_line("Vega-Lite chart", _title(spec.get("title")), facts), _VEGA_LITE_CHART.kind)


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


def _vega(spec: Any) -> Chart:
    if not isinstance(spec, dict):
        return _VEGA_CHART
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
    return Chart(_line("Vega chart", _title(spec.get("title")), facts), _VEGA_CHART.kind)


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


def _bokeh(doc: Any) -> Chart:
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
    return Chart(_line("Bokeh plot", _title(text), facts), _BOKEH_PLOT.kind)


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


# Charts drawn by HTML ------------------------------------------------------------------


def _html_chart(html: str) -> Chart | None:
    """The chart a page of scripts draws, read from the spec inside it; None if none."""
    call = _PLOTLY_CALL.search(html) if "Plotly.newPlot" in html else None
    traces = _decode(html, call.end()) if call is not None else None
    if traces is not None and isinstance(traces[0], list):
        # Plotly.newPlot("id", [traces], {layout}, {config})
        comma = _COMMA.match(html, traces[1])
        layout = _loads(html, comma.end()) if comma else None
        return _plotly({"data": traces[0], "layout": layout})
    if "plotly-graph-div" in html:
        return _PLOTLY_FIGURE
    if "vegaEmbed" in html or "vega-embed" in html:
        call_at = html.rfind("})(")  # Altair: (function(spec, embedOpt){…})({spec}, {…});
        spec = _loads(html, call_at + 3) if call_at >= 0 else None
        if isinstance(spec, dict) and ("marks" in spec and "mark" not in spec):
            return _vega(spec)
        return _vega_lite(spec) if isinstance(spec, dict) else _VEGA_LITE_CHART
    if "data-root-id" in html or "bk-root" in html or "docs_json" in html:
        doc = _bokeh_html_doc(html)
        return _bokeh(doc) if doc is not None else _BOKEH_PLOT
    return None
