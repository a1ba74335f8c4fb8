"""How two peer tools show a notebook to a model, for the context-size benchmark.

The peers
---------
* **Jupyter MCP Server**: datalayer/jupyter-mcp-server, PyPI ``jupyter-mcp-server``
  **2.2.4** (BSD-3-Clause). Its tools ``read_notebook`` (``response_format`` "brief" or
  "detailed", ``limit=20`` cells a call by default) and ``read_cell`` (one cell;
  ``include_outputs=True`` by default) read the notebook as Jupyter's contents manager
  (or the live collaborative document) gives it.
* **jupyter-ai-tools**: jupyter-ai-contrib/jupyter-ai-tools, PyPI ``jupyter-ai-tools``
  **0.7.0** (BSD-3-Clause). Its toolkit tool ``read_notebook(file_path,
  include_outputs=False)`` returns Markdown: the notebook metadata as a YAML block, then
  per cell a heading, a YAML block of ``id``/``type``/``execution_count`` plus the cell
  metadata, a fenced source block and, when asked, fenced outputs. With a real-time
  collaboration provider it reads the ``.ipynb`` with ``json.load``, so we pass the raw
  JSON as it is.

What the functions return
-------------------------
Each function takes a notebook as a plain dict (``json.load`` of the .ipynb) and
returns ``(text, images)``:

* ``text``: every character the model receives as text. One tool result can hold several
  text content blocks, and a reading can take several tool calls. We join the blocks,
  and then the calls, with ``"\\n"``.
* ``images``: how many image content blocks go to the model as well (MCP
  ``ImageContent``, which the client turns into image blocks). A benchmark adds image
  tokens for these. An image that a peer inlines as base64 text is counted in ``text``,
  and an image it drops counts nowhere.

``mcp_server_outline(nb)``
    ``read_notebook(response_format="brief")`` called page by page (``start_index`` 0, 20,
    40, ...). Each page is ``"Notebook <name> has <n> cells.\\n"`` followed by a TSV table
    of Index, Type, Count and First Line, where First Line is the cell's first line plus
    ``...(<k> lines hidden)``. It never shows outputs or images, so ``images`` is 0.
``mcp_server_full(nb)``
    ``read_cell(cell_index=i, include_outputs=True)`` for every cell. This is their fullest
    form that keeps outputs, because ``read_notebook``'s "detailed" mode shows sources but
    no outputs. A call returns a header block (``=====Cell i | type: ... | execution
    count: ...=====``) and a source block. For a code cell it then returns one block per
    output:

    * stream output: its text, with ANSI codes stripped;
    * error output: the traceback lines joined with ``"\\n"``, ANSI codes stripped;
    * execute_result or display_data with ``image/png``: **an image content block only**.
      The output's text/plain and text/latex are then not sent at all. Other image types
      are not sent as images;
    * any other execute_result or display_data: the first of text/markdown, text/latex,
      application/json (pretty-printed) and text/plain that it has. When it has none of
      these, ``[HTML Output]`` if it has text/html, otherwise ``[<type> Data:
      keys=[...]]``. HTML, widget views and JavaScript are never shown, and a pandas
      DataFrame arrives as its text/plain table.

    ``images`` counts the ``image/png`` outputs. The server's ``ALLOW_IMG_OUTPUT``
    setting, default true, is assumed; when it is off, the placeholder text
    ``[Image Output (PNG) - Image display disabled]`` is sent in place of each image.
``ai_tools_full(nb)``
    ``read_notebook(file_path, include_outputs=True)``. Outputs appear as fenced blocks:
    stream text, text/plain of execute_result and display_data, and error tracebacks joined
    with ``"\\n"``. ANSI codes are *not* stripped. Every other MIME type (images, HTML,
    LaTeX, widgets) is dropped without a placeholder, so ``images`` is 0. The package's
    ``read_cell_image`` (one image, as ``ImageContent``) is not in its ``toolkit`` list,
    so a model using the toolkit cannot reach images. Cell metadata (Colab ids, tags,
    ...) and notebook metadata (for example saved widget state) are dumped as YAML.

Also provided: ``mcp_server_detailed(nb)``, which calls ``read_notebook(response_format=
"detailed")`` page by page (full sources, no outputs).

Two keyword options: ``mcp_server_*(..., notebook_name="notebook")``, the name the
model gave the notebook in ``use_notebook``. ``mcp_server_*(..., wire="structured")``
measures ``structuredContent`` (compact ``json.dumps``) in place of ``content``, for a
client that shows the model the structured answer. For ``read_cell`` that answer lists
every output twice (``result`` and ``outputs``) and puts a placeholder in place of each
image's bytes, so ``images`` is 0.

Version 3 notebooks
-------------------
Version 3 notebooks (``worksheets``) are converted in memory with ``nbformat.convert``,
after their multi-line strings are joined, as nbformat's reader does. The upgrade would
give each cell a random id; we give ids of the same form derived from the cell's index,
so counts are reproducible. The MCP server sees exactly this, because the contents
manager reads files the same way. jupyter-ai-tools with a collaboration provider reads
the raw JSON and would find no ``cells`` in a v3 file, so it would show only the metadata
block. Its other path, which reads the live JupyterLab model, shows the converted
notebook, and we measure that one.

Real code or re-implementation
------------------------------
When the peer package is importable (optional benchmark-only installs, not project
dependencies; installed beside the environment, as ``notebook_view.py`` says, because they
bring Jupyter server and JupyterLab extensions), its real formatting code is called:

* MCP: ``jupyter_mcp_server.models.Notebook`` (``format_output`` and
  ``Cell.get_source``/``get_outputs``) and ``jupyter_mcp_server.results.answer``. The glue
  lines of ``ReadNotebookTool.execute`` and ``ReadCellTool.execute`` are copied here, and
  the ``_outputs`` shape from ``server.py`` into ``peer_mcp_server.py``, because those
  modules need a running server.
* jupyter-ai-tools: ``jupyter_ai_tools.utils.notebook_json_to_md``.

Otherwise the faithful re-implementations in ``peer_mcp_server.py`` and
``peer_ai_tools.py`` are used. Each one names the file, function and version it follows.
``MCP_SERVER_IMPL`` and ``AI_TOOLS_IMPL`` say which is in use. Pass ``real=False`` to
force the re-implementation, or ``real=True`` to require the package.

Both paths were checked against the peers' real tool output (2026-11-28): a Jupyter server
with the jupyter-mcp-server 2.2.4 extension (``document_url`` and ``code_sandbox_url``
"local"), called over MCP streamable HTTP with mcp 2.3.0 (``use_notebook``, then
``read_cell`` for every index and ``read_notebook`` brief page by page), and
jupyter-ai-tools 0.7.0's toolkit ``read_notebook(path, include_outputs=True)`` with an RTC
provider (v4 files: it reads them from disk). On the 23 fixtures in
``tests/fixtures/notebooks/real`` (the Plotly, Altair and Bokeh ones among them) and the
three notebooks ``notebook_view.py`` generates, the text (blocks joined as above) and the
image count were the same as these functions give, with the packages' code and with the
re-implementations.

    .venv/bin/python benchmarks/peers.py [notebook.ipynb ...]

prints the character and image counts of the fixtures, or of the notebooks given.
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

import nbformat
import peer_ai_tools
import peer_mcp_server

MCP_SERVER_VERSION = "2.2.4"
AI_TOOLS_VERSION = "0.7.0"
MCP_READ_NOTEBOOK_LIMIT = 20  # server.py read_notebook(limit=20)

Wire = Literal["content", "structured"]


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _load_real_mcp() -> Any:
    try:
        from jupyter_mcp_server import results
        from jupyter_mcp_server.models import Notebook
        from mcp.types import ImageContent
    except Exception:
        return None
    return {"Notebook": Notebook, "answer": results.answer, "ImageContent": ImageContent}


def _load_real_ai_tools() -> Any:
    try:
        from jupyter_ai_tools.utils import notebook_json_to_md
    except Exception:
        return None
    return notebook_json_to_md


_REAL_MCP = _load_real_mcp()
_REAL_AI_TOOLS = _load_real_ai_tools()

MCP_SERVER_IMPL = (
    f"jupyter-mcp-server {_version('jupyter-mcp-server')} (installed, real code)"
    if _REAL_MCP
    else f"re-implementation of jupyter-mcp-server {MCP_SERVER_VERSION}"
)
AI_TOOLS_IMPL = (
    f"jupyter-ai-tools {_version('jupyter-ai-tools')} (installed, real code)"
    if _REAL_AI_TOOLS
    else f"re-implementation of jupyter-ai-tools {AI_TOOLS_VERSION}"
)


def _use_real(loaded: Any, real: bool | None, name: str) -> bool:
    if real is None:
        return loaded is not None
    if real and loaded is None:
        raise RuntimeError(f"{name} is not importable here")
    return real


# --------------------------------------------------------------------------------------
# Reading the notebook as each peer reads it
# --------------------------------------------------------------------------------------


def _contents_manager_view(nb: dict[str, Any]) -> nbformat.NotebookNode:
    """The notebook as Jupyter's contents manager hands it to the MCP server.

    ``nbformat.read(..., as_version=4)``: the version's reader joins multi-line strings
    (``rejoin_lines``) and drops transient fields, then ``nbformat.convert`` upgrades a
    v3 notebook to v4 (with reproducible cell ids). Validation is left out: it only logs.
    """
    node: nbformat.NotebookNode = nbformat.reader.reads(json.dumps(nb))
    if node.get("nbformat", 4) >= 4:
        return node
    node = nbformat.convert(node, 4)
    # The v3 -> v4 upgrade gives each cell a random 8-hex id (nbformat random_cell_id);
    # jupyter-ai-tools prints ids, so make them reproducible: same form, fixed values.
    for index, cell in enumerate(node.cells):
        cell["id"] = hashlib.sha256(f"cell-{index}".encode()).hexdigest()[:8]
    return node


def _ai_tools_view(nb: dict[str, Any]) -> dict[str, Any]:
    """The notebook dict jupyter-ai-tools formats: the raw JSON for v4, v3 converted."""
    if int(nb.get("nbformat", 4)) >= 4:
        return copy.deepcopy(nb)
    # plain dicts, as JSON would give them (a NotebookNode would carry a YAML tag)
    plain: dict[str, Any] = json.loads(json.dumps(_contents_manager_view(nb)))
    return plain


# --------------------------------------------------------------------------------------
# Jupyter MCP Server: the tool calls
# --------------------------------------------------------------------------------------


def _mcp_notebook(nb: dict[str, Any], use_real: bool) -> Any:
    content = _contents_manager_view(nb)
    if use_real:
        return _REAL_MCP["Notebook"](**content)
    return peer_mcp_server.Notebook(content)


def _mcp_read_notebook(
    notebook: Any, name: str, response_format: str, start_index: int, limit: int
) -> str:
    # jupyter_mcp_server/tools/read_notebook_tool.py ReadNotebookTool.execute, 2.2.4
    # (everything after the notebook is loaded)
    if start_index >= len(notebook) and not (start_index == 0 and len(notebook) == 0):
        return f"Start index {start_index} is out of range. Notebook has {len(notebook)} cells."
    info_list = [f"Notebook {name} has {len(notebook)} cells.\n"]
    info_list.append(
        notebook.format_output(
            response_format=response_format, start_index=start_index, limit=limit
        )
    )
    return "\n".join(info_list)


def _mcp_read_cell(
    notebook: Any, cell_index: int, use_real: bool, include_outputs: bool = True
) -> Any:
    # jupyter_mcp_server/tools/read_cell_tool.py ReadCellTool.execute, 2.2.4
    # (everything after the notebook is loaded)
    if cell_index >= len(notebook):
        return f"Cell index {cell_index} is out of range. Notebook has {len(notebook)} cells."
    cell = notebook[cell_index]
    count = cell.execution_count if cell.execution_count else "N/A"
    info_list: list[Any] = [
        f"=====Cell {cell_index} | type: {cell.cell_type} | execution count: {count}====="
    ]
    info_list.append(cell.get_source("readable") if use_real else cell.get_source())
    if cell.cell_type == "code" and include_outputs:
        info_list.extend(cell.get_outputs("readable") if use_real else cell.get_outputs())
    return info_list


def _mcp_wire(
    value: Any, kind: str, shaped: bool, use_real: bool, wire: Wire
) -> tuple[list[str], int]:
    """The text blocks and image count a tool result puts in front of the model.

    ``@structured(kind, shape=...)`` turns the tool's value into a ``CallToolResult``
    (jupyter_mcp_server/results.py answer, 2.2.4): ``content`` holds the blocks,
    ``structuredContent`` the same answer as data.
    """
    shape = peer_mcp_server.outputs_shape if shaped else None
    if use_real:
        result = _REAL_MCP["answer"](value, kind=kind, shape=shape)
        content, structured = result.content, result.structured_content
    else:
        content = peer_mcp_server.content_of(value)
        structured = {"kind": kind}
        structured.update(
            peer_mcp_server.without_image_data(shape(value))
            if shape is not None
            else peer_mcp_server.default_shape(peer_mcp_server.without_image_data(value))
        )
    if wire == "structured":
        return [json.dumps(structured, ensure_ascii=False)], 0
    texts, images = [], 0
    for block in content:
        if peer_mcp_server.is_image(block):
            images += 1
        else:
            texts.append(block if isinstance(block, str) else block.text)
    return texts, images


def _mcp_pages(
    nb: dict[str, Any], response_format: str, notebook_name: str, wire: Wire, real: bool | None
) -> tuple[str, int]:
    use_real = _use_real(_REAL_MCP, real, "jupyter_mcp_server")
    notebook = _mcp_notebook(nb, use_real)
    texts: list[str] = []
    for start in range(0, max(len(notebook), 1), MCP_READ_NOTEBOOK_LIMIT):
        page = _mcp_read_notebook(
            notebook, notebook_name, response_format, start, MCP_READ_NOTEBOOK_LIMIT
        )
        blocks, _ = _mcp_wire(page, "notebook.read", False, use_real, wire)
        texts.extend(blocks)
    return "\n".join(texts), 0


def mcp_server_outline(
    nb: dict[str, Any],
    *,
    notebook_name: str = "notebook",
    wire: Wire = "content",
    real: bool | None = None,
) -> tuple[str, int]:
    """Jupyter MCP Server ``read_notebook(response_format="brief")``, every page of 20."""
    return _mcp_pages(nb, "brief", notebook_name, wire, real)


def mcp_server_detailed(
    nb: dict[str, Any],
    *,
    notebook_name: str = "notebook",
    wire: Wire = "content",
    real: bool | None = None,
) -> tuple[str, int]:
    """Jupyter MCP Server ``read_notebook(response_format="detailed")``, every page.

    Full sources, no outputs.
    """
    return _mcp_pages(nb, "detailed", notebook_name, wire, real)


def mcp_server_full(
    nb: dict[str, Any], *, wire: Wire = "content", real: bool | None = None
) -> tuple[str, int]:
    """Jupyter MCP Server ``read_cell(cell_index=i, include_outputs=True)`` for every cell."""
    use_real = _use_real(_REAL_MCP, real, "jupyter_mcp_server")
    notebook = _mcp_notebook(nb, use_real)
    texts: list[str] = []
    images = 0
    for index in range(len(notebook)):
        value = _mcp_read_cell(notebook, index, use_real)
        blocks, n = _mcp_wire(value, "cell.read", True, use_real, wire)
        texts.extend(blocks)
        images += n
    return "\n".join(texts), images


def ai_tools_full(nb: dict[str, Any], *, real: bool | None = None) -> tuple[str, int]:
    """jupyter-ai-tools ``read_notebook(file_path, include_outputs=True)``: Markdown, no images."""
    use_real = _use_real(_REAL_AI_TOOLS, real, "jupyter_ai_tools")
    notebook_json = _ai_tools_view(nb)
    to_md = _REAL_AI_TOOLS if use_real else peer_ai_tools.notebook_json_to_md
    return to_md(notebook_json, include_outputs=True), 0


# --------------------------------------------------------------------------------------


def main(argv: list[str]) -> None:
    fixtures = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "notebooks" / "real"
    paths = [Path(a) for a in argv] or sorted(fixtures.glob("*.ipynb"))
    print(f"MCP server: {MCP_SERVER_IMPL}\njupyter-ai-tools: {AI_TOOLS_IMPL}\n")
    header = (
        f"{'notebook':52} {'bytes':>8} {'outline':>8} {'mcp full':>9} {'img':>4}"
        f" {'ai-tools':>9} {'img':>4}"
    )
    print(header)
    print("-" * len(header))
    for path in paths:
        nb = json.loads(path.read_bytes())
        outline, _ = mcp_server_outline(nb)
        full, full_images = mcp_server_full(nb)
        ai, ai_images = ai_tools_full(nb)
        name = path.name if len(path.name) <= 52 else path.name[:49] + "..."
        print(
            f"{name:52} {path.stat().st_size:>8} {len(outline):>8} {len(full):>9} {full_images:>4}"
            f" {len(ai):>9} {ai_images:>4}"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
