"""A chart reads as what it shows, never as the script that draws it.

- A Plotly figure, a Vega-Lite or Vega chart (Altair) and a Bokeh plot read as a line or two
  from their spec (kind, title, traces or marks, axes or encodings, data sizes), in preference
  to their HTML and text fallbacks; a static picture of the chart is still attached.
- HTML that shows no text (only scripts and styles) says so in a few words; HTML with text
  reads as it always did.
- Any spec, however large, deep or malformed, gives a short line and never an exception: sizes
  come from lengths (typed arrays are never decoded), titles and names are clipped.

The outputs are real where they can be: the fixture notebooks (``fixtures/notebooks/real``,
licences in its LICENSES.md) hold what plotly 4, nteract, Altair 2 and 4 and Bokeh 2 wrote. The
others are written as plotly 7.1 (``plotly_mimetype+notebook``), Altair 6.3 and Bokeh 3.9 emit
them (compared with their output; none of them is a test dependency).
"""

from __future__ import annotations

import base64
import binascii
import copy
import html
import json
import math
import struct
from itertools import count
from pathlib import Path
from typing import Any

import pytest
from inline_snapshot import snapshot
from notebook_corpus import REAL, png

from jupyter_agent.messages import ImageBlock
from jupyter_agent.notebook.bridge import Cell
from jupyter_agent.notebook.file import FileBridge
from jupyter_agent.notebook.outputs import ViewLimits, render_output
from jupyter_agent.notebook.view import fits_whole, render_notebook, render_outline

PLOTLY = "application/vnd.plotly.v1+json"
KEY = "sk-ant-api03-" + "Q" * 80


def _display(data: dict[str, Any], metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"output_type": "display_data", "data": data, "metadata": metadata or {}}


def _read(output: dict[str, Any], images: list[ImageBlock] | None = None) -> str:
    """An output as the model reads it in a notebook view, without its "display:" label."""
    text = render_output(output, ViewLimits(), [] if images is None else images)
    return text.split("\n", 1)[1]


def _real_outputs(name: str) -> list[dict[str, Any]]:
    notebook = json.loads((REAL / name).read_text(encoding="utf-8"))
    return [o for cell in notebook["cells"] for o in cell.get("outputs", [])]


def _joined(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


# --- as the libraries write them ----------------------------------------------------------------

TEMPLATE = {
    "data": {
        "heatmap": [{"type": "heatmap", "colorbar": {"outlinewidth": 0, "ticks": ""}}],
        "scatter": [{"fillpattern": {"fillmode": "overlay", "size": 10}, "type": "scatter"}],
    },
    "layout": {
        "colorway": ["#636efa", "#EF553B", "#00cc96", "#ab63fa", "#FFA15A", "#19d3f3"],
        "font": {"color": "#2a3f5f"},
        "plot_bgcolor": "#E5ECF6",
        "xaxis": {
            "gridcolor": "white",
            "linecolor": "white",
            "ticks": "",
            "title": {"standoff": 15},
        },
    },
}
"""A few keys of plotly's default template (the real one is 7 KB in every figure)."""

REVENUE = {
    "data": [
        {"name": "a", "x": [1, 2, 3], "y": [4, 5, 6], "type": "scatter"},
        {
            "x": {"dtype": "i1", "bdata": "AAECAwQ="},
            "y": {
                "dtype": "f8",
                "bdata": "ANTIYQR9ZD9+dxASKDDiP4hl9YVq4bU/aEW0S1d15T/qsVeDoDblPw==",
            },
            "type": "bar",
        },
    ],
    "layout": {
        "title": {"text": "Revenue"},
        "xaxis": {"title": {"text": "Year"}},
        "yaxis": {"title": {"text": "Revenue"}},
        "template": TEMPLATE,
    },
}
"""``go.Figure([go.Scatter(…, name="a"), go.Bar(x=np.arange(5), y=…)])`` as plotly 7.1 writes
it: NumPy arrays as typed arrays (base64 bytes), lists as lists."""


def typed(values: list[float], dtype: str = "f8", shape: str | None = None) -> dict[str, str]:
    """A NumPy array as plotly ≥ 6 writes it; ``shape`` ("20, 30") only for 2-D arrays."""
    code = {"f8": "d", "f4": "f", "i4": "i", "i2": "h", "i1": "b", "u1": "B"}[dtype]
    spec = {
        "dtype": dtype,
        "bdata": base64.b64encode(struct.pack(f"<{len(values)}{code}", *values)).decode(),
    }
    return spec | ({"shape": shape} if shape else {})


def plotly_bundle(spec: dict[str, Any]) -> dict[str, Any]:
    """A figure as plotly 7.1's default notebook renderer displays it: the spec, and HTML that
    draws it with the same JSON inline."""
    uid = "c8eac87f-caac-4354-b4f2-2c1b84643939"
    call = ",                        ".join(
        json.dumps(part, separators=(",", ":")).replace("/", "\\u002f")
        for part in (spec["data"], spec["layout"])
    )
    page = (
        '<div style="height:525px; width:100%;">            <script src="https://cdnjs.cloudflare'
        '.com/ajax/libs/mathjax/3.2.2/es5/tex-svg.min.js"></script><script>if (window.MathJax && '
        "window.MathJax.Hub && window.MathJax.Hub.Config) {window.MathJax.Hub.Config({SVG: {font: "
        f'"STIX-Web"}}}});}}</script>                    <div id="{uid}" class="plotly-graph-div" '
        'style="height:100%; width:100%;"></div>            <script>                window.PLOTLY'
        "ENV=window.PLOTLYENV || {};                                if (document.getElementById("
        f'"{uid}")) {{                    Plotly.newPlot(                        "{uid}",         '
        f'               {call},                        {{"responsive": true}}                    )'
        f".then(function(){{\nvar gd = document.getElementById('{uid}');\n"
        "var x = new MutationObserver(function (mutations, observer) {{\n"
        "        var display = window.getComputedStyle(gd).display;\n"
        "        if (!display || display === 'none') {{\n            Plotly.purge(gd);\n"
        "            observer.disconnect();\n        }}\n}});\n"
        "                        })                };            </script>        </div>"
    )
    return {PLOTLY: spec, "text/html": page}


def faceted_figure() -> dict[str, Any]:
    """``px.scatter(gapminder, x="gdpPercap", y="lifeExp", color="continent", facet_col="year",
    facet_col_wrap=4, title="Gap")``: one scattergl trace per continent and year, 12 subplots,
    axis titles on the outer axes only."""
    continents = {"Asia": 33, "Europe": 30, "Africa": 52, "Americas": 25, "Oceania": 2}
    traces = []
    for panel in range(1, 13):
        axis = "" if panel == 1 else str(panel)
        for continent, countries in continents.items():
            traces.append(
                {
                    "hovertemplate": "continent=" + continent + "<br>gdpPercap=%{x}<extra></extra>",
                    "legendgroup": continent,
                    "marker": {"color": "#636efa", "symbol": "circle"},
                    "mode": "markers",
                    "name": continent,
                    "showlegend": panel == 1,
                    "x": typed([1.0] * countries),
                    "xaxis": f"x{axis}",
                    "y": typed([50.0] * countries),
                    "yaxis": f"y{axis}",
                    "type": "scattergl",
                }
            )
    layout: dict[str, Any] = {"template": TEMPLATE, "title": {"text": "Gap"}, "legend": {}}
    for panel in range(1, 13):
        axis = "" if panel == 1 else str(panel)
        layout[f"xaxis{axis}"] = {
            "anchor": f"y{axis}",
            "title": {"text": "gdpPercap"} if panel <= 4 else {},
        }
        layout[f"yaxis{axis}"] = {
            "anchor": f"x{axis}",
            "title": {"text": "lifeExp"} if panel % 4 == 1 else {},
        }
    layout["annotations"] = [
        {"text": f"year={1952 + 5 * i}", "showarrow": False} for i in range(12)
    ]
    return {"data": traces, "layout": layout}


ALTAIR_TEXT = (
    "<VegaLite 6 object>\n\nIf you see this message, it means the renderer has not been properly "
    "enabled\nfor the frontend that you are using. For more information, see\n"
    "https://altair-viz.github.io/user_guide/display_frontends.html#troubleshooting\n"
)
ALTAIR_ROWS = [
    {"year": 2000 + i % 3, "revenue": float(i), "region": "abc"[i // 2]} for i in range(6)
]
ALTAIR_LINE = {
    "config": {"view": {"continuousWidth": 300, "continuousHeight": 300}},
    "data": {"name": "data-2e8591890987c3cb911d2a272fc9e544"},
    "mark": {"type": "line", "point": True},
    "encoding": {
        "color": {"field": "region", "type": "nominal"},
        "x": {"field": "year", "title": "Year", "type": "ordinal"},
        "y": {"field": "revenue", "type": "quantitative"},
    },
    "title": "Revenue by year",
    "$schema": "https://vega.github.io/schema/vega-lite/v6.4.1.json",
    "datasets": {"data-2e8591890987c3cb911d2a272fc9e544": ALTAIR_ROWS},
}
"""``alt.Chart(df, title=…).mark_line(point=True).encode(x=alt.X("year:O", title="Year"),
y="revenue:Q", color="region:N")`` as Altair 6.3 writes it (``chart.to_dict()``)."""


def altair(spec: dict[str, Any]) -> dict[str, Any]:
    """A chart as Altair 6.3's ``mimetype`` renderer displays it (its type ends ``.v6.json``)."""
    return {"application/vnd.vegalite.v6.json": spec, "text/plain": ALTAIR_TEXT}


def bokeh_document(
    title: str, x_label: str, y_label: str, glyphs: dict[str, int]
) -> dict[str, Any]:
    """A figure's document as Bokeh 3.9 serialises it (``figure(title=…, x_axis_label=…,
    y_axis_label=…)`` with a glyph of ``n`` points for each ``name: n``)."""
    ids = count(1006)

    def model(name: str, **attributes: Any) -> dict[str, Any]:
        made = {"type": "object", "name": name, "id": f"p{next(ids)}"}
        return made | ({"attributes": attributes} if attributes else {})

    def column(n: int) -> dict[str, Any]:
        data = base64.b64encode(struct.pack(f"<{n}d", *range(n))).decode()
        array = {"type": "bytes", "data": data}
        return {
            "type": "ndarray",
            "array": array,
            "shape": [n],
            "dtype": "float64",
            "order": "little",
        }

    def renderer(glyph: str, n: int) -> dict[str, Any]:
        entries = [["x", list(range(n))], ["y", column(n)]]
        source = model(
            "ColumnDataSource",
            selected=model("Selection", indices=[], line_indices=[]),
            selection_policy=model("UnionRenderers"),
            data={"type": "map", "entries": entries},
        )
        fields = {"x": {"type": "field", "field": "x"}, "y": {"type": "field", "field": "y"}}
        return model(
            "GlyphRenderer",
            data_source=source,
            view=model("CDSView", filter=model("AllIndices")),
            glyph=model(glyph, **fields, line_color="#1f77b4"),
            nonselection_glyph=model(glyph, **fields, line_alpha=0.1),
            muted_glyph=model(glyph, **fields, line_alpha=0.2),
        )

    def axis(label: str) -> dict[str, Any]:
        ticker = model("BasicTicker", mantissas=[1, 2, 5])
        return model(
            "LinearAxis", ticker=ticker, formatter=model("BasicTickFormatter"), axis_label=label
        )

    figure = model(
        "Figure",
        x_range=model("DataRange1d"),
        y_range=model("DataRange1d"),
        title=model("Title", text=title),
        renderers=[renderer(glyph, n) for glyph, n in glyphs.items()],
        toolbar=model("Toolbar", tools=[model("PanTool"), model("WheelZoomTool")]),
        left=[axis(y_label)],
        below=[axis(x_label)],
        center=[model("Grid", axis={"id": "p1018"}), model("Legend", items=[])],
    )
    config = model("DocumentConfig", notifications=model("Notifications"))
    doc = {"version": "3.9.2", "title": "Bokeh Application", "config": config, "roots": [figure]}
    return {"42cca163-375d-47fc-aecd-4b79e6169cea": doc}


def bokeh_notebook_script(docs: dict[str, Any]) -> str:
    """What ``show(p)`` runs in a notebook (Bokeh 3.9): the document as a JS object."""
    items = '[{"docid":"42cca163-375d-47fc-aecd-4b79e6169cea","roots":{"p1008":"f5237aa8"}}]'
    return (
        "(function(root) {\n  function embed_document(root) {\n"
        f"  const docs_json = {json.dumps(docs, separators=(',', ':'))};\n"
        f"  const render_items = {items};\n"
        "  void root.Bokeh.embed.embed_items_notebook(docs_json, render_items);\n  }\n"
        "  if (root.Bokeh !== undefined) {\n    embed_document(root);\n  }\n})(window);"
    )


def bokeh_file_html(docs: dict[str, Any]) -> str:
    """``bokeh.embed.file_html(p, CDN, "my plot")``: the document HTML-escaped in a JSON script."""
    escaped = html.escape(json.dumps(docs, separators=(",", ":")), quote=False)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n  <head>\n    <meta charset="utf-8">\n'
        "    <title>my plot</title>\n    <style>\n      html, body {\n        margin: 0;\n      }\n"
        '    </style>\n<script src="https://cdn.bokeh.org/bokeh/release/bokeh-3.9.2.min.js"></script>\n'
        '<script>\nBokeh.set_log_level("info");\n</script>\n  </head>\n  <body>\n'
        '    <div id="cf73b1a4" data-root-id="p1008" style="display: contents;"></div>\n'
        f'    <script type="application/json" id="b8474e3c">\n      {escaped}\n    </script>\n'
        "    <script>\n      (function() {\n        const fn = function() {\n"
        "          const docs_json = document.getElementById('b8474e3c').textContent;\n"
        "        }\n      })();\n    </script>\n  </body>\n</html>"
    )


def bokeh_components(docs: dict[str, Any]) -> str:
    """``script + div`` of ``bokeh.embed.components(p)``: the document as a JS string,
    HTML-escaped, its quotes as ``&#x27;`` and its backslashes doubled."""
    text = html.escape(json.dumps(docs, separators=(",", ":")), quote=False)
    text = text.replace("'", "&#x27;").replace("\\", "\\\\")
    return (
        "<script>\n(function() {\n  const fn = function() {\n    Bokeh.safely(function() {\n"
        f"        const docs_json = '{text}';\n"
        "        root.Bokeh.embed.embed_items(docs_json, render_items);\n    });\n  };\n"
        '})();\n</script>\n<div id="d8b651ba" data-root-id="p1008" style="display: contents;"></div>'
    )


# --- Plotly -------------------------------------------------------------------------------------


def test_a_plotly_figure_reads_as_its_traces_and_sizes_not_its_script():
    # plotly 4 in the classic notebook: the spec beside `require(["plotly"], …)` HTML
    figure = _real_outputs("jupytext__plotly_graphs.ipynb")[1]
    assert 'require(["plotly"]' in _joined(figure["data"]["text/html"])
    text = _read(figure)
    assert text == snapshot('[Plotly figure "bar plot": 1 trace (bar); 3 points]')
    assert "require(" not in text and "PLOTLYENV" not in text


def test_typed_arrays_are_sized_from_their_length_and_never_decoded(monkeypatch):
    def refuse(*args: Any, **kwargs: Any) -> bytes:
        raise AssertionError("a typed array was decoded")

    monkeypatch.setattr(base64, "b64decode", refuse)
    monkeypatch.setattr(binascii, "a2b_base64", refuse)
    assert _read(_display(plotly_bundle(REVENUE))) == snapshot("""\
[Plotly figure "Revenue": 2 traces (scatter, bar); x: "Year", y: "Revenue"; 8 points]
traces: scatter "a", 3 points; bar, 5 points\
""")
    heat = {
        "data": [
            {"z": typed([0.5] * 600, shape="20, 30"), "type": "heatmap", "name": "sensor"},
            {"z": [[1, 2, 3], [4, 5, 6]], "type": "contour"},
            {"x": typed([0.0] * 200_000, "f4"), "type": "histogram"},
        ],
        "layout": {"template": TEMPLATE},
    }
    assert _read(_display({PLOTLY: heat})) == snapshot("""\
[Plotly figure: 3 traces (heatmap, contour, histogram); 200,000 points, 2 z grids, the first 20×30]
traces: heatmap "sensor", z 20×30; contour, z 2×3; histogram, 200,000 points\
""")


def test_a_faceted_figure_counts_its_subplots_and_names_each_series_once():
    text = _read(_display(plotly_bundle(faceted_figure())))
    assert text == snapshot("""\
[Plotly figure "Gap": 60 traces (scattergl); x: "gdpPercap", y: "lifeExp"; 12 subplots; 1,704 points]
names: "Asia", "Europe", "Africa", "Americas", "Oceania"\
""")


def test_fifty_traces_still_read_in_two_lines():
    traces = [
        {"type": "bar" if i % 5 else "scatter", "name": f"run {i}", "y": [i]} for i in range(50)
    ]
    text = _read(_display({PLOTLY: {"data": traces, "layout": {"title": "Runs"}}}))
    assert text == snapshot("""\
[Plotly figure "Runs": 50 traces (40 bar, 10 scatter); 50 points]
names: "run 0", "run 1", "run 2", "run 3", "run 4", "run 5", "run 6", "run 7" and 42 more\
""")


def test_3d_scene_axes_and_animation_frames_are_read():
    spec = {
        "data": [{"x": [1, 2], "y": [1, 2], "z": [1, 2], "type": "scatter3d", "name": "path"}],
        "layout": {
            "scene": {"xaxis": {"title": {"text": "East"}}, "zaxis": {"title": {"text": "Depth"}}},
            "title": "Dive",
        },
        "frames": [{"data": [{"x": [i]}], "name": str(i)} for i in range(12)],
    }
    assert _read(_display({PLOTLY: spec})) == snapshot("""\
[Plotly figure "Dive": 1 trace (scatter3d); x: "East", z: "Depth"; 2 points; 12 animation frames]
traces: scatter3d "path", 2 points\
""")


def test_a_figure_with_a_static_picture_keeps_the_picture_attached():
    # MyST-NB's docs: plotly's spec beside the PNG plotly rendered of it
    figure = next(
        o for o in _real_outputs("myst-nb__interactive.ipynb") if PLOTLY in o.get("data", {})
    )
    assert "image/png" in figure["data"]
    images: list[ImageBlock] = []
    text = _read(figure, images)
    assert len(images) == 1
    assert text == snapshot("""\
[image png 1199×450, 95.8 KB — attached as image 1]
[Plotly figure: 3 traces (scatter); x: "sepal_width", y: "sepal_length"; 150 points]
traces: scatter "setosa", 50 points; scatter "versicolor", 50 points; scatter "virginica", 50 points\
""")
    # a picture larger than the view's is attached too (downscaled), beside the spec's line
    images = []
    text = _read(_display({PLOTLY: REVENUE, "image/png": png(700, 500)}), images)
    assert len(images) == 1 and "attached as image 1" in text and "Plotly figure" in text


def test_a_figure_drawn_by_html_alone_is_read_from_the_html():
    # the notebook_connected, colab and kaggle renderers write only the HTML
    for figure in (
        _real_outputs("jupytext__plotly_graphs.ipynb")[2],
        _display(plotly_bundle(REVENUE)),
        _display(plotly_bundle(faceted_figure())),
    ):
        with_spec = _read(figure)
        html_only = _display({"text/html": figure["data"]["text/html"]})
        assert _read(html_only) == with_spec


# --- Vega-Lite and Vega (Altair) ----------------------------------------------------------------


def test_an_altair_chart_reads_as_its_marks_encodings_and_rows():
    text = _read(_display(altair(ALTAIR_LINE)))
    assert text == snapshot(
        '[Vega-Lite chart "Revenue by year": line; x: year (ordinal, "Year"), y: revenue (quantitative), color: region (nominal); 6 data rows]'
    )
    assert "If you see this message" not in text
    # Altair 5 and earlier name the type application/vnd.vegalite.v5+json
    older = _read(_display({"application/vnd.vegalite.v5+json": ALTAIR_LINE, "text/plain": "x"}))
    assert older == text


def test_composed_altair_charts_say_how_they_are_composed():
    rule = {
        "mark": {"type": "rule"},
        "encoding": {"y": {"aggregate": "mean", "field": "revenue", "type": "quantitative"}},
    }
    line = {
        k: v for k, v in ALTAIR_LINE.items() if k not in ("data", "datasets", "config", "$schema")
    }
    shared = {k: ALTAIR_LINE[k] for k in ("data", "$schema", "datasets")}
    points = {
        "mark": {"type": "point"},
        "encoding": {
            "x": {"field": "year", "type": "ordinal"},
            "y": {"field": "revenue", "type": "quantitative"},
        },
    }
    charts = {
        "layer": {"layer": [line, rule], **shared},
        "hconcat": {"hconcat": [line, line | {"mark": {"type": "bar"}}], **shared},
        "facet": {
            "facet": {"column": {"field": "region", "type": "nominal"}},
            "spec": points,
            **shared,
        },
        "repeat": {
            "repeat": {"column": ["revenue", "year"]},
            "spec": {
                "mark": {"type": "bar"},
                "encoding": {
                    "x": {"field": "year", "type": "ordinal"},
                    "y": {"field": {"repeat": "column"}, "type": "quantitative"},
                },
            },
            **shared,
        },
        "url": {
            "data": {"url": "data/cars.json"},
            "mark": {"type": "point"},
            "encoding": {
                "tooltip": [
                    {"field": "Name", "type": "nominal"},
                    {"field": "Origin", "type": "nominal"},
                ],
                "x": {"field": "Horsepower", "type": "quantitative"},
                "y": {"field": "Miles_per_Gallon", "type": "quantitative"},
            },
            "title": {"text": "Cars", "subtitle": "sub"},
        },
    }
    assert {name: _read(_display(altair(spec))) for name, spec in charts.items()} == snapshot(
        {
            "layer": '[Vega-Lite chart: layer of 2; line, rule; x: year (ordinal, "Year"), y: revenue (quantitative), color: region (nominal), y: mean(revenue) (quantitative); 6 data rows]',
            "hconcat": '[Vega-Lite chart: hconcat of 2; line, bar; x: year (ordinal, "Year"), y: revenue (quantitative), color: region (nominal); 6 data rows]',
            "facet": "[Vega-Lite chart: faceted by region (column); point; x: year (ordinal), y: revenue (quantitative); 6 data rows]",
            "repeat": "[Vega-Lite chart: repeat of 2; bar; x: year (ordinal), y: repeat (quantitative); 6 data rows]",
            "url": '[Vega-Lite chart "Cars": point; x: Horsepower (quantitative), y: Miles_per_Gallon (quantitative), tooltip: Name, Origin; data from "data/cars.json"]',
        }
    )


def test_altairs_html_reads_as_the_chart_not_as_its_text_fallback():
    # Altair 4's default renderer: a vegaEmbed script with the spec inline, and "alt.Chart(...)"
    chart = next(
        o
        for o in _real_outputs("myst-nb__interactive.ipynb")
        if "alt.Chart" in _joined(o.get("data", {}).get("text/plain", ""))
    )
    assert _read(chart) == snapshot(
        "[Vega-Lite chart: point; x: sepal_width (quantitative), y: sepal_length (quantitative), color: species (nominal), size: sepal_length (quantitative); 150 data rows]"
    )


def test_a_vega_spec_reads_as_its_marks_axes_and_data():
    spec = {
        "$schema": "https://vega.github.io/schema/vega/v5.json",
        "title": "Sales",
        "data": [
            {
                "name": "table",
                "values": [{"category": c, "amount": i} for i, c in enumerate("ABCDEFGH")],
            }
        ],
        "scales": [
            {"name": "xscale", "type": "band", "domain": {"data": "table", "field": "category"}}
        ],
        "axes": [
            {"orient": "bottom", "scale": "xscale", "title": "Category"},
            {"orient": "left", "scale": "yscale"},
        ],
        "marks": [
            {"type": "rect", "from": {"data": "table"}},
            {"type": "group", "marks": [{"type": "text"}, {"type": "text"}]},
        ],
    }
    assert _read(_display({"application/vnd.vega.v5+json": spec})) == snapshot(
        '[Vega chart "Sales": marks: 2 text, 1 rect, 1 group; axes: "Category"; 1 data set, 8 rows]'
    )


# --- Bokeh --------------------------------------------------------------------------------------


def test_bokehs_notebook_outputs_read_as_its_loader_and_its_plot():
    # Bokeh 2 in MyST-NB's docs: output_notebook() then show(p), each an HTML div and a script
    outputs = [
        o
        for o in _real_outputs("myst-nb__interactive.ipynb")
        if "bk-root" in _joined(o.get("data", {}).get("text/html", ""))
        or "application/javascript" in o.get("data", {})
    ]
    assert [_read(o) for o in outputs] == snapshot(
        [
            "[HTML, 192 characters] Loading BokehJS ...",
            "[Bokeh loader script]",
            "[Bokeh plot]",
            "[Bokeh plot: 1 glyph (circle); 150 data rows]",
        ]
    )


def test_a_bokeh_plot_reads_its_title_glyphs_axes_and_rows_however_it_is_embedded():
    docs = bokeh_document(
        "Sales over time", "Month", "Units", {"Line": 3, "Scatter": 100, "VBar": 2}
    )
    exec_mime = "application/vnd.bokehjs_exec.v0+json"
    shown = _display(
        {"application/javascript": bokeh_notebook_script(docs), exec_mime: ""},
        {exec_mime: {"id": "p1008"}},
    )
    readings = {
        _read(shown),
        _read(_display({"text/html": bokeh_file_html(docs)})),
        _read(_display({"text/html": bokeh_components(docs)})),
    }
    assert readings == snapshot(
        {
            '[Bokeh plot "Sales over time": 3 glyphs (line, scatter, vbar); x: "Month", y: "Units"; 105 data rows]'
        }
    )
    # a script whose document cannot be read still says what it is
    assert _read(_display({"application/javascript": "embed()", exec_mime: ""})) == "[Bokeh plot]"


# --- HTML and JavaScript ------------------------------------------------------------------------


def test_html_that_is_only_scripts_and_styles_says_so_in_a_few_words():
    # plotly's init_notebook_mode(connected=True): a require.config script
    init = _real_outputs("jupytext__plotly_graphs.ipynb")[0]
    assert _read(init) == snapshot("[HTML: scripts only, 526 characters]")
    pages = {
        "styled": '<link rel="stylesheet" href="x.css"><style>.a{color:red}</style>\n<script src="a.js"></script>',
        "style": "<STYLE type='text/css'>.a{}</STYLE>  <!-- a comment -->",
        "empty": '<div id="root" class="widget-area"></div>&nbsp;',
    }
    assert {name: _read(_display({"text/html": page})) for name, page in pages.items()} == snapshot(
        {
            "styled": "[HTML: scripts and styles only, 93 characters]",
            "style": "[HTML: styles only, 55 characters]",
            "empty": "[HTML: no visible text, 47 characters]",
        }
    )


def test_html_with_text_reads_as_it_always_did():
    pages = {
        "text": "<p>Hello <b>world</b></p>",
        "scripted": "<div>Loading BokehJS ...</div><script>var x = 1;</script>",
        "unclosed tag text": "<p>Ready",
        "a custom element named like a hidden one": "<title-bar>Sales</title-bar><script>x</script>",
    }
    assert {name: _read(_display({"text/html": page})) for name, page in pages.items()} == snapshot(
        {
            "text": "[HTML, 25 characters] Hello world",
            "scripted": "[HTML, 57 characters] Loading BokehJS ...var x = 1;",
            "unclosed tag text": "[HTML, 8 characters] Ready",
            "a custom element named like a hidden one": "[HTML, 46 characters] Salesx",
        }
    )


def test_javascript_alone_says_what_it_is():
    script = "element.append('<b>hi</b>');\n" * 100
    assert _read(_display({"application/javascript": script})) == "[JavaScript, 2,900 characters]"


# --- hostile specs ------------------------------------------------------------------------------


def _nested(depth: int, leaf: Any, key: str) -> Any:
    for _ in range(depth):
        leaf = {key: leaf}
    return leaf


def _cyclic() -> dict[str, Any]:
    spec: dict[str, Any] = {"data": [], "layout": {}}
    spec["layout"]["xaxis"] = spec
    spec["data"].append(spec)
    return spec


HOSTILE: dict[str, dict[str, Any]] = {
    "a number for a spec": {PLOTLY: 5},
    "a list for a spec": {PLOTLY: [1, 2, 3]},
    "a string for the traces": {PLOTLY: {"data": "traces", "layout": []}},
    "a million traces": {PLOTLY: {"data": [{"type": "scatter", "x": [1, 2]}] * 1_000_000}},
    "a million non-traces": {PLOTLY: {"data": [None, 5, "x"] * 333_334}},
    "a title nested 100,000 deep": {
        PLOTLY: {"data": [], "layout": {"title": _nested(100_000, "t", "text")}}
    },
    "a figure that contains itself": {PLOTLY: _cyclic()},
    "titles that are not strings": {
        PLOTLY: {
            "data": [{"name": 10**5000}, {"name": math.nan}, {"name": [KEY]}, {"name": True}],
            "layout": {
                "title": math.inf,
                "xaxis": {"title": 10**5000},
                "yaxis": {"title": {"text": math.nan}},
            },
        }
    },
    "a 10 MB title and name": {
        PLOTLY: {"data": [{"name": "Q" * 10_000_000}], "layout": {"title": {"text": KEY * 100_000}}}
    },
    "NaN and infinite data": {PLOTLY: {"data": [{"x": [math.nan] * 10, "y": [math.inf] * 10}]}},
    "typed arrays that lie": {
        PLOTLY: {
            "data": [
                {"x": {"dtype": "f8", "bdata": 5}},
                {"x": {"dtype": "c16", "bdata": "AAAA"}},
                {"z": {"dtype": "f8", "bdata": "AA", "shape": "-1, 5"}},
                {"z": {"shape": "a, b"}},
                {"z": {"shape": [10**20, 1]}},
                {"z": {"dtype": "f8", "bdata": "A" * 10_000_000}},
            ]
        }
    },
    "a spec as unbalanced JSON text": {PLOTLY: "[" * 5_000_000},
    "a spec as JSON nested 100,000 deep": {PLOTLY: "[" * 100_000 + "]" * 100_000},
    "wrong types everywhere": {
        PLOTLY: {
            "data": [{"type": ["x"], "xaxis": {}, "z": [[]], "name": {"a": 1}}],
            "layout": {
                1: 2,
                "xaxis": "x",
                "scene": 5,
                "scene2": {"xaxis": []},
                "title": {"text": {"text": "t"}},
            },
            "frames": "x",
        }
    },
    "100,000 titled axes": {
        PLOTLY: {"data": [], "layout": {f"xaxis{i}": {"title": f"T{i}"} for i in range(1, 100_000)}}
    },
    "a Vega-Lite view nested 100,000 deep": {
        "application/vnd.vegalite.v5+json": _nested(100_000, {"mark": "bar"}, "spec")
    },
    "100,000 layers of 1,000 encodings": {
        "application/vnd.vegalite.v5+json": {
            "layer": [
                {"mark": "bar", "encoding": {f"c{i}": {"field": "f" * 1000} for i in range(1000)}}
            ]
            * 100_000,
            "datasets": {f"d{i}": [{"a": 1}] * 10 for i in range(100_000)},
        }
    },
    "a Vega-Lite spec of wrong types": {
        "application/vnd.vegalite.v4+json": {
            "mark": {"type": 5},
            "encoding": {
                "x": [None, {"field": {"a": 1}}],
                "y": "y",
                5: {"field": 1, "aggregate": [], "timeUnit": {}},
            },
            "title": [KEY] * 1_000_000,
            "data": {"values": "a,b\n1,2"},
            "facet": 5,
            "repeat": 7,
        }
    },
    "a Vega spec as deep JSON text": {"application/vnd.vega.v5+json": '{"a":' * 200_000},
    "Vega marks nested 100,000 deep": {
        "application/vnd.vega.v5+json": {
            "marks": [_nested(100_000, [], "marks")],
            "axes": [5, {"title": {}}],
            "data": [{"values": 5}],
        }
    },
    "a Bokeh document nested 200,000 deep": {
        "application/vnd.bokehjs_exec.v0+json": "",
        "application/javascript": "const docs_json = " + "[" * 200_000,
    },
    "a Bokeh document of 6 MB": {
        "application/vnd.bokehjs_exec.v0+json": "",
        "application/javascript": 'const docs_json = {"a": [' + "1," * 3_000_000 + "1]};",
    },
    "a Bokeh script that is no text": {
        "application/vnd.bokehjs_exec.v0+json": "",
        "application/javascript": _nested(100_000, {}, "a"),
    },
    "a script that is no text": {"application/javascript": _nested(100_000, {}, "a")},
    "a Bokeh document of wrong types": {
        "application/vnd.bokehjs_exec.v0+json": "",
        "application/javascript": "const docs_json = "
        + json.dumps(
            {
                "d": {
                    "roots": [
                        {
                            "type": "object",
                            "name": "Figure",
                            "id": 1,
                            "attributes": {"title": 5, "below": {"id": 2}, "left": [7, None]},
                        },
                        {
                            "type": "object",
                            "name": "GlyphRenderer",
                            "attributes": {"glyph": {"id": "missing"}},
                        },
                        {
                            "type": "object",
                            "name": "ColumnDataSource",
                            "attributes": {
                                "data": {"type": "map", "entries": [[1], "x", [1, 2, 3]]}
                            },
                        },
                    ]
                }
            }
        ),
    },
}


@pytest.mark.parametrize("data", HOSTILE.values(), ids=HOSTILE.keys())
def test_any_spec_reads_as_a_short_line_and_never_raises(data):
    text = _read(_display(data))
    assert text.startswith("[") and len(text) <= 1_000 and text.count("\n") <= 1
    assert "Q" * 100 not in text and "f" * 100 not in text


HOSTILE_HTML = {
    "5 MB of <": ("<" * 5_000_000, "[HTML, 5,000,000 characters] "),
    "a million unclosed <script": ("<script" * 1_000_000, "[HTML, 7,000,000 characters] "),
    "a million unclosed comments": ("<!--" * 1_000_000, "[HTML, 4,000,000 characters] "),
    "a script that never ends": (
        "<script>" + "x" * 5_000_000,
        "[HTML: scripts only, 5,000,008 characters]",
    ),
    "300,000 scripts": ("<script>a</script>" * 300_000, "[HTML, 5,400,000 characters] "),
    "newPlot calls that never end": (
        "<script>" + "Plotly.newPlot( 'a', [" * 200_000 + "</script>",
        "[HTML: scripts only, 4,400,017 characters]",
    ),
    "vegaEmbed and a million calls": (
        "<script>vegaEmbed" + "})(" * 1_000_000 + "</script>",
        "[Vega-Lite chart]",
    ),
    "Bokeh's marks and no document": (
        '<div class="bk-root" data-root-id="1"></div><script>docs_json = '
        + "{" * 100_000
        + "</script>",
        "[Bokeh plot]",
    ),
    "a capital İ before a script": ("İ" * 1000 + "<script>x</script>", "[HTML, 1,018 characters] "),
}


@pytest.mark.parametrize(("page", "starts"), HOSTILE_HTML.values(), ids=HOSTILE_HTML.keys())
def test_html_that_defeats_a_naive_scan_still_reads_in_a_few_words(page, starts):
    text = _read(_display({"text/html": page}))
    assert text.startswith(starts) and len(text) <= 400


# --- through the notebook view ------------------------------------------------------------------


async def test_a_notebook_view_shows_the_figure_and_none_of_its_javascript():
    cells = await FileBridge(REAL / "jupytext__plotly_graphs.ipynb").read()
    view = fits_whole(cells, None, "plotly_graphs.ipynb")
    assert view is not None
    assert view.text.count('[Plotly figure "bar plot": 1 trace (bar); 3 points]') == 2
    assert "[HTML: scripts only, 526 characters]" in view.text
    for script in ("require(", "PLOTLYENV", "Plotly.newPlot", "requirejs", "window."):
        assert script not in view.text


async def test_the_outline_says_what_each_chart_is_in_a_few_words():
    # it said "html 8,773 chars" for a figure, its mime type, or "text 5 lines" for an Altair
    # chart's "alt.Chart(...)": what the cell view reads the output as, in a few words
    said = {}
    names = (
        "jupytext__plotly_graphs.ipynb",
        "myst-nb__interactive.ipynb",
        "nteract-examples__altair.ipynb",
    )
    for name in names:
        outline = render_outline(await FileBridge(REAL / name).read(), name).text
        cells = outline.splitlines()[3:]  # after the title, the summary and the key
        said[name] = [line.split(" → ")[1] for line in cells if " → " in line]
    assert said == snapshot(
        {
            "jupytext__plotly_graphs.ipynb": [
                "html 526 chars",
                "plotly figure (1 trace); plotly figure (1 trace)",
            ],
            "myst-nb__interactive.ipynb": [
                "table 6 lines",
                "vega-lite chart",
                "png 1199×450, 95.8 KB, plotly figure (3 traces)",
                "html 192 chars; bokeh loader script; bokeh plot; bokeh plot",
                "widget",
                "widget",
            ],
            "nteract-examples__altair.ipynb": [
                "stdout 52 chars; vega-lite chart",
            ],
        }
    )
    # as plotly 7.1, Altair 6.3 and Bokeh 3.9 write them; a title of any length stays out of
    # the outline, and a spec that cannot be read still says what it is
    vega = {"$schema": "https://vega.github.io/schema/vega/v5.json", "marks": [{"type": "rect"}]}
    long = "a very long title " * 1_000
    charts = [
        _display(plotly_bundle(REVENUE)),
        _display({"text/html": plotly_bundle(REVENUE)["text/html"]}),
        _display(plotly_bundle(faceted_figure())),
        _display(altair(ALTAIR_LINE | {"title": long})),
        _display({"application/vnd.vega.v5+json": vega}),
        _display(
            {
                "application/javascript": bokeh_notebook_script(
                    bokeh_document(long, "x", "y", {"Line": 3})
                ),
                "application/vnd.bokehjs_exec.v0+json": "",
            }
        ),
        _display({PLOTLY: "{" * 100_000}),
        _display({PLOTLY: {"data": []}}),
    ]
    cell = Cell(id="charts", source="show()", execution_count=1, outputs=charts)
    line = render_outline([cell], "t").text.splitlines()[-1]
    assert line == snapshot(
        "1 · charts · code [1] · show() → plotly figure (2 traces); plotly figure (2 traces); plotly figure (60 traces); vega-lite chart; vega chart; bokeh plot; plotly figure; plotly figure (no traces)"
    )


async def test_a_gallery_of_46_figures_reads_in_a_small_fraction_of_its_html(tmp_path: Path):
    real = _real_outputs("jupytext__plotly_graphs.ipynb")[1]
    cells = []
    for i in range(46):
        figure = copy.deepcopy(real)
        figure["data"][PLOTLY]["layout"]["title"] = {"text": f"Figure {i}"}
        figure["data"][PLOTLY]["data"][0]["y"] = list(range(i + 1))
        cells.append(
            Cell(id=f"fig{i}", source=f"figure({i})", execution_count=i + 1, outputs=[figure])
        )
    html_chars = sum(len(_joined(c.outputs[0]["data"]["text/html"])) for c in cells)
    view = render_notebook(cells, "gallery.ipynb")
    assert view.next_cell is None  # the whole gallery in one read
    assert '[Plotly figure "Figure 45": 1 trace (bar); 46 points]' in view.text
    assert "require(" not in view.text
    # each figure costs a line, where it cost its script's first 300 characters
    assert len(view.text) * 40 < html_chars
