"""The notebook as the model reads it: an outline first, detail on demand, secrets masked.

- A small notebook is shown whole on the first read. A larger one first comes as an
  **outline** (one line per cell: id, type, execution count, first line, what its outputs
  are and how big, how long it ran, provenance flags), bounded in size whatever the
  notebook; the model then reads a range of cells, one cell, or one output in full.
- Every view is bounded: a range stops at a cell boundary and says where to go on.
- Each code cell carries its provenance: not run, ran out of order, or edited since it
  ran, so the agent knows when the kernel's state may not match the code.

Rendering is plain CPU work on data already read; the tools run it in a worker thread.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from .._wording import duration, plural
from ..messages import ImageBlock
from ..secrets.shapes import mask_secrets
from .bridge import Cell
from .outputs import (
    IMAGE_TYPES,
    WIDGET,
    ViewLimits,
    as_text,
    clip,
    describe_image,
    image_info,
    output_chart,
    render_output,
)

WHOLE_CHARS = 40_000
"""A notebook whose full view fits in this is shown whole on the first read (~10k tokens)."""
VIEW_CHARS = 40_000
"""The most one read returns (~10k tokens), outline or cells."""
FIRST_LINE = 72


class ExecutionHistory(Protocol):
    """What the kernel ran: the source of an execution count, when it knows it."""

    def source_of(self, execution_count: int) -> str | None: ...


@runtime_checkable
class ExecutionCells(Protocol):
    """A history that also knows which cell (by the id its frontend gave) ran as each
    execution count: a count saved in a notebook by an earlier kernel names another
    execution of this one."""

    def cell_of(self, execution_count: int) -> str | None: ...


@runtime_checkable
class ExecutionTimes(Protocol):
    """A history that also knows how long each execution took (seconds)."""

    def duration_of(self, execution_count: int) -> float | None: ...


@dataclass
class NotebookView:
    text: str
    images: list[ImageBlock] = field(default_factory=list)
    next_cell: int | None = None
    """Where a read that ran out of room goes on (1-based), or None when it showed all."""


def provenance(
    cells: Sequence[Cell],
    history: ExecutionHistory | None,
    running: Mapping[str, float] | None = None,
) -> dict[str, str]:
    """Flags per cell id: 'running (2 min 5 s so far)' for the cells the agent started that
    still run (``running``: their seconds so far), 'not run', 'edited since it ran', 'ran
    out of order'."""
    flags: dict[str, list[str]] = {}
    last = 0
    for cell in cells:
        if cell.cell_type != "code":
            continue
        notes = flags.setdefault(cell.id, [])
        if running and cell.id in running:
            notes.append(f"running ({duration(running[cell.id])} so far)")
            continue
        count = cell.execution_count
        if count is None:
            if cell.source.strip():
                notes.append("not run")
            continue
        if count < last:
            notes.append("ran out of order")
        last = max(last, count)
        if cell.edited_since_run or _ran_otherwise(cell, count, history):
            notes.append(EDITED_SINCE_RUN)
    return {cid: ", ".join(n) for cid, n in flags.items() if n}


EDITED_SINCE_RUN = "edited since it ran: its outputs are from its earlier source"


def _ran_otherwise(cell: Cell, count: int, history: ExecutionHistory | None) -> bool:
    """Whether this kernel ran ``cell`` as ``count`` with another source (only when it
    knows that count was this very cell's)."""
    if not isinstance(history, ExecutionCells) or history.cell_of(count) != cell.id:
        return False
    ran = history.source_of(count)
    return ran is not None and ran.strip() != cell.source.strip()


# --- one cell in full ------------------------------------------------------------------------


def render_cell(
    cell: Cell,
    position: int,
    flags: str,
    limits: ViewLimits,
    images: list[ImageBlock] | None,
    history: ExecutionHistory | None = None,
) -> str:
    return _draft(cell, position, flags, limits, history).finish(limits, images)


@dataclass
class _Draft:
    """A cell's view before its images are attached (none is decoded yet): the text of
    each part (header, source, each output; an output with an image is left to
    :meth:`finish` unless ``measured``), and the outputs whose text an image changes."""

    parts: list[str | None]
    images: list[tuple[int, dict[str, Any], str]]
    """Outputs with an image: the part each is, the output, where it is (for its text)."""
    least: int = 0
    """When measured: the fewest characters the cell's view can have, its images attached."""

    def finish(self, limits: ViewLimits, images: list[ImageBlock] | None) -> str:
        """The cell's view, its images (decoded and downscaled here) joining ``images``."""
        before = len(images) if images is not None else 0
        for part, output, where in self.images:
            room = images is not None and len(images) - before < limits.images_per_cell
            if room or self.parts[part] is None:
                n = part - 1  # the parts are the header, the source, then the outputs
                shown = render_output(output, limits, images if room else None, where)
                self.parts[part] = f"⤷ {n} {shown}"
        return "\n".join(p for p in self.parts if p is not None)


def _draft(
    cell: Cell,
    position: int,
    flags: str,
    limits: ViewLimits,
    history: ExecutionHistory | None,
    *,
    measured: bool = False,
) -> _Draft:
    """``measured``: the outputs with an image written too (none attached), for
    :attr:`_Draft.least`."""
    head, source = _header(cell, position, flags, history), _source(cell.source, limits)
    parts: list[str | None] = [head, source]
    draft = _Draft(parts, [], len(head) + 1 + len(source))
    for n, output in enumerate(cell.outputs, 1):
        where = f"{cell.id!r}, output={n}"
        image = _has_image(output)
        if image:
            draft.images.append((len(parts), output, where))
        if image and not measured:
            parts.append(None)
            continue
        text = f"⤷ {n} " + render_output(output, limits, None, where)
        parts.append(text)
        # Attached, an image's line reads otherwise ("attached as image 2"), never on
        # more lines: its length is all the view can lose.
        draft.least += 1 + len(text) - (_image_line(text) if image else 0)
    return draft


def _has_image(output: dict[str, Any]) -> bool:
    """Whether an image of the output may be attached (as ``render_output`` does it)."""
    data = output.get("data")
    return (
        output.get("output_type") not in ("stream", "error")
        and isinstance(data, dict)
        and any(m in data for m in IMAGE_TYPES)
    )


def _image_line(text: str) -> int:
    """The length of an output's image line (its whole text when there is none)."""
    return next((len(line) for line in text.split("\n") if line.startswith("[image ")), len(text))


def _header(cell: Cell, position: int, flags: str, history: ExecutionHistory | None) -> str:
    head = f"── {position} · {cell.id} · {cell.cell_type}"
    if cell.cell_type == "code":
        head += f" [{cell.execution_count if cell.execution_count is not None else ' '}]"
    took = _took(cell, history)
    if took:
        head += f" · took {took}"
    if flags:
        head += f" · {flags}"
    return head


_BLANK_RUNS = re.compile(r"[ \t]+$|\n{3,}", re.MULTILINE)


def _source(source: str, limits: ViewLimits) -> str:
    if not source.strip():
        return "(empty)"
    half = limits.source_lines // 2
    text = clip(source.strip("\n"), half, half, limits.output_chars * 4)
    # trailing spaces and runs of blank lines carry nothing and cost tokens
    return _BLANK_RUNS.sub(lambda m: "\n\n" if m.group().startswith("\n") else "", text)


# --- the whole notebook, or a range ------------------------------------------------------------


def render_notebook(
    cells: Sequence[Cell],
    title: str,
    history: ExecutionHistory | None = None,
    limits: ViewLimits | None = None,
    *,
    start: int = 1,
    end: int | None = None,
    budget: int = VIEW_CHARS,
    running: Mapping[str, float] | None = None,
) -> NotebookView:
    """Cells ``start``..``end`` (1-based, inclusive) in full, stopping at a cell boundary
    once ``budget`` characters are used (always at least one cell). ``running``: the
    cells the agent started that still run, with their seconds so far."""
    limits = limits or ViewLimits()
    flags = provenance(cells, history, running)
    last = len(cells) if end is None else min(end, len(cells))
    images: list[ImageBlock] = []
    header = f"{title}\n{_summary(cells)}"
    if start > 1 or last < len(cells):
        header += f"\nShowing cells {start}–{last}."
    body: list[str] = []
    used = len(header)
    next_cell = None
    for i in range(start - 1, last):
        attached = len(images)
        text = render_cell(cells[i], i + 1, flags.get(cells[i].id, ""), limits, images, history)
        if body and used + len(text) > budget:
            del images[attached:]
            body.append(
                f"… cells {i + 1}–{last} not shown (this read is full): "
                f"read_notebook(start={i + 1}, end={last})"
            )
            next_cell = i + 1
            break
        body.append(text)
        used += len(text) + 2
    return NotebookView("\n\n".join([header, *body]), images, next_cell)


def fits_whole(
    cells: Sequence[Cell],
    history: ExecutionHistory | None,
    title: str,
    running: Mapping[str, float] | None = None,
) -> NotebookView | None:
    """The whole notebook (as :func:`render_notebook` shows it), if its full view is small
    enough to be the first read.

    Decided before any image is decoded: the cells' text is made first, and as soon as
    it is sure not to fit, whatever its images turn out to be, the answer is None and no
    image was touched. A notebook that fits is rendered once, its text reused."""
    if sum(len(c.source) for c in cells) > WHOLE_CHARS:
        return None
    limits = ViewLimits()
    flags = provenance(cells, history, running)
    header = f"{title}\n{_summary(cells)}"
    least = len(header)
    drafts = []
    for i, cell in enumerate(cells):
        draft = _draft(cell, i + 1, flags.get(cell.id, ""), limits, history, measured=True)
        least += 2 + draft.least
        if least > WHOLE_CHARS:
            return None
        drafts.append(draft)
    images: list[ImageBlock] = []
    text = "\n\n".join([header, *(d.finish(limits, images) for d in drafts)])
    return NotebookView(text, images) if len(text) <= WHOLE_CHARS else None


# --- the outline -------------------------------------------------------------------------------


def render_outline(
    cells: Sequence[Cell],
    title: str,
    history: ExecutionHistory | None = None,
    *,
    start: int = 1,
    budget: int = VIEW_CHARS,
    running: Mapping[str, float] | None = None,
) -> NotebookView:
    """One line per cell from ``start``: what a model needs to choose what to read."""
    flags = provenance(cells, history, running)
    lines = [
        title,
        _summary(cells),
        "Outline: position · id · type [execution count] · first line → outputs. "
        "read_notebook(start=, end=) shows cells in full; read_cell(id) one cell; "
        "read_cell(id, output=n) one output in full.",
    ]
    used = sum(len(line) + 1 for line in lines)
    for i in range(start - 1, len(cells)):
        line = _outline_line(cells[i], i + 1, flags.get(cells[i].id, ""), history)
        if used + len(line) > budget:
            lines.append(
                f"… cells {i + 1}–{len(cells)} not listed: read_notebook(start={i + 1}, "
                "outline=True)"
            )
            break
        lines.append(line)
        used += len(line) + 1
    return NotebookView("\n".join(lines))


def _outline_line(cell: Cell, position: int, flags: str, history: ExecutionHistory | None) -> str:
    kind = {"markdown": "md", "code": "code"}.get(cell.cell_type, cell.cell_type)
    count = ""
    if cell.cell_type == "code":
        count = f" [{cell.execution_count if cell.execution_count is not None else ' '}]"
    line = f"{position} · {cell.id} · {kind}{count} · {_first_line(cell.source)}"
    outputs = [_output_kind(o) for o in cell.outputs]
    if outputs:
        line += " → " + "; ".join(outputs)
    took = _took(cell, history)
    if took:
        line += f" · took {took}"
    if flags:
        line += f" · {flags}"
    return line


def _first_line(source: str) -> str:
    stripped = source.strip()
    if not stripped:
        return "(empty)"
    first = mask_secrets(stripped[: FIRST_LINE + 200].partition("\n")[0])
    text = first[:FIRST_LINE] + ("…" if len(first) > FIRST_LINE else "")
    lines = stripped.count("\n") + 1
    return text + (f" (+{lines - 1} lines)" if lines > 1 else "")


def _output_kind(output: dict[str, Any]) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        return f"{output.get('name', 'stdout')} {_size(as_text(output.get('text', '')))}"
    if kind == "error":
        evalue = mask_secrets(as_text(output.get("evalue", ""))[:80])
        return f"error {output.get('ename')}: {evalue}"
    data = output.get("data") or {}
    if not isinstance(data, dict):
        return "output"
    parts = []
    for mime in IMAGE_TYPES:
        if mime in data:
            parts.append(describe_image(image_info(mime, as_text(data[mime]))))
            break
    chart = output_chart(data)
    if chart is not None:
        parts.append(chart.kind)
    elif WIDGET in data:
        parts.append("widget")
    elif "text/latex" in data:
        parts.append("latex")
    elif "text/html" in data and "<table" in as_text(data["text/html"])[:100_000]:
        parts.append(f"table {_size(as_text(data.get('text/plain', '')))}")
    elif "text/plain" in data:
        parts.append(f"text {_size(as_text(data['text/plain']))}")
    elif "text/html" in data:
        parts.append(f"html {len(as_text(data['text/html'])):,} chars")
    return ", ".join(parts) or ", ".join(sorted(data))[:80]


def _size(text: str) -> str:
    lines = text.count("\n") + (bool(text) and not text.endswith("\n"))
    if lines > 1:
        return f"{lines:,} lines"
    return f"{len(text):,} chars"


def _summary(cells: Sequence[Cell]) -> str:
    by_type: dict[str, int] = {}
    for cell in cells:
        by_type[cell.cell_type] = by_type.get(cell.cell_type, 0) + 1
    kinds = ", ".join(f"{n} {t}" for t, n in sorted(by_type.items(), key=lambda kv: -kv[1]))
    code = [c for c in cells if c.cell_type == "code"]
    ran = sum(c.execution_count is not None for c in code)
    errors = [
        i + 1
        for i, c in enumerate(cells)
        if any(o.get("output_type") == "error" for o in c.outputs)
    ]
    images = sum(
        any(m in (o.get("data") or {}) for m in IMAGE_TYPES) for c in cells for o in c.outputs
    )
    text = f"{plural(len(cells), 'cell')} ({kinds})" if cells else "0 cells"
    if code:
        text += f" · {ran} of {len(code)} code cells ran"
    if errors:
        shown = ", ".join(str(p) for p in errors[:10]) + ("…" if len(errors) > 10 else "")
        text += f" · errors in cells {shown}"
    if images:
        text += f" · {plural(images, 'image')}"
    return text


_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?")


def _took(cell: Cell, history: ExecutionHistory | None) -> str:
    """How long a code cell last ran, compactly ("4 min 12 s"), or "" when unknown or
    under a tenth of a second: from the timing JupyterLab records in the cell, else from
    this kernel's own timing of that execution count (if the kernel ran this very source
    with it: a count saved from an earlier kernel names another execution)."""
    if cell.cell_type != "code":
        return ""
    seconds = _recorded(cell.metadata)
    count = cell.execution_count
    if seconds is None and count is not None and isinstance(history, ExecutionTimes):
        ran = history.source_of(count)
        if ran is not None and ran.strip() == cell.source.strip():
            seconds = history.duration_of(count)
    if seconds is None or seconds < 0.1:
        return ""
    return duration(seconds)


def _recorded(metadata: dict[str, Any]) -> float | None:
    """Seconds the cell last ran, from the timing JupyterLab records (``execution``)."""
    timing = metadata.get("execution") if isinstance(metadata, dict) else None
    if not isinstance(timing, dict):
        return None
    began, ended = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
    if not isinstance(began, str) or not isinstance(ended, str):
        return None
    a, b = _STAMP.match(began), _STAMP.match(ended)
    if a is None or b is None:
        return None
    return (
        datetime.fromisoformat(b.group()[:26]) - datetime.fromisoformat(a.group()[:26])
    ).total_seconds()
