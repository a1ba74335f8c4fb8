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
- A **chart is read from its spec** (:mod:`.charts`), not from the script that draws it: the
  spec wins over its HTML and text fallbacks, and a static picture of it is still attached.
  HTML that is only scripts and styles says so in a few words.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import re
import struct
from dataclasses import dataclass
from html import unescape
from html.parser import HTMLParser
from typing import Any

from .._wording import byte_size
from ..messages import ImageBlock, ImageSource
from ..secrets.shapes import mask_secrets
from .charts import JAVASCRIPT, Chart, chart_in_html, may_draw_chart, read_chart, text_of

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

    chart = output_chart(data)
    if chart is not None:
        return chart.summary
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
        script = text_of(data[JAVASCRIPT])
        return f"[JavaScript, {len(script):,} characters]" if script else "[JavaScript]"
    return ""


def output_chart(data: dict[str, Any]) -> Chart | None:
    """The chart a rich output reads as, in a cell's view and in the outline: read from its
    spec, else from the scripts of its HTML when that shows no text and nothing wins over it
    (a widget, LaTeX, an image beside it, a table); None when it shows no chart."""
    chart = read_chart(data)
    if chart is not None or WIDGET in data or "text/latex" in data:
        return chart
    if "text/html" not in data or any(m in data for m in IMAGE_TYPES):
        return None
    html = as_text(data["text/html"])
    if not may_draw_chart(html):
        return None
    _, _, has_text = _html_parts(html)
    if has_text or html_table(html, 1) is not None:
        return None
    return chart_in_html(html)


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


# HTML without text -------------------------------------------------------------------------

_HIDDEN = ("script", "style", "title", "noscript", "template")
"""Elements whose content a reader never sees as text."""
_NAME_END = re.compile(r"[\s/>]")
MAX_BLOCKS = 5_000
"""Elements (and look-alikes) an HTML scan steps over before it takes the HTML as content."""
_TAG = re.compile(r"<[^<>]*>")
_TEXT_SCAN = 200_000
"""Characters between scripts looked at for visible text; a longer stretch counts as text."""


def _html_reading(html: str, table_rows: int) -> tuple[str, str | None]:
    """An HTML output that draws no chart (:func:`output_chart`) read as (what wins over its
    text/plain: its table; what stands in for HTML that shows no text, in a few words, when
    there is no plain text). ("", None): HTML with text, shown as it always was."""
    table = html_table(html, table_rows)
    if table is not None:
        return table, None
    scripts, styles, has_text = _html_parts(html)
    if has_text:
        return "", None
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
