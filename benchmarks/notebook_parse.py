"""Reading large notebooks in file mode, measured in one run.

    .venv/bin/python benchmarks/notebook_parse.py [--megabytes 50] [--rounds 3]

Prints:

* **The event loop during a read.** A heartbeat on the loop wakes every 10 ms while
  ``FileBridge.read()`` reads a notebook holding one ``--megabytes`` output (as one line;
  as 80-character lines; as lines of accented text and emoji), and while an edit of
  another cell writes it back. The longest the heartbeat waited past its time is how long
  a Stop click (or any other message) would have waited. Each is measured with the JSON
  decoded in steps of at most ``WINDOW`` characters (as shipped) and in one C call per
  value (the window lifted: as before), interleaved, median of ``--rounds``, with the
  ratio of the waits and of the reads' times.
* **The first read's decision.** ``read_notebook``'s first read (the whole notebook when
  its view fits, else the outline) of a ~600 KB notebook made of real ones with plots
  (the test fixtures), as shipped (decided from the cells' text before any image is
  decoded) and as before (the whole view rendered, up to six images downscaled, then the
  outline), median of ``--rounds``, with the ratio and the images each downscaled; the
  same for a 290 KB one with larger plots, and for a 240 KB notebook whose view fits (both
  render it once: about 1×).

Nothing is asserted: machines here are shared and noisy, and the numbers are ratios
measured side by side.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from notebook_corpus import REAL, analysis_cells, code, dumps, stream, v4  # noqa: E402

from jupyter_agent.notebook import _bounded_json, outputs  # noqa: E402
from jupyter_agent.notebook.bridge import Cell  # noqa: E402
from jupyter_agent.notebook.file import FileBridge  # noqa: E402
from jupyter_agent.notebook.view import (  # noqa: E402
    WHOLE_CHARS,
    NotebookView,
    fits_whole,
    render_notebook,
    render_outline,
)

BEAT = 0.010
"""Seconds between two heartbeats."""
LARGE = (
    "handson-ml3__01_the_machine_learning_landscape.ipynb",
    "ipython__Custom Display Logic.ipynb",
    "myst-nb__interactive.ipynb",
    "sympy__Sylvester_resultant.ipynb",
)
"""Real notebooks with plots and formulas, put together: about 600 KB and 30 images, with
33,000 characters of code and text (few enough to be shown whole), but too large a view."""
BIG_PLOTS = "bayesian-hackers__Ch1_Introduction_Pyro.ipynb"
"""290 KB, its plots larger (each takes ~40 ms to downscale), its view too large."""
FITS = "handson-ml3__01_the_machine_learning_landscape.ipynb"
"""240 KB, with eight plots: its view fits."""
MODES = ("bounded", "one call")
"""JSON decoded in steps of at most ``WINDOW`` characters (as shipped), or in one call."""


# --- the event loop during a read --------------------------------------------------------


def huge_output(kind: str, megabytes: float) -> str:
    size = int(megabytes * 1_000_000)
    if kind == "one line":
        text = "x" * size + "\n"
    elif kind == "lines":
        text = ("y" * 79 + "\n") * (size // 80)
    else:
        line = "é€😀 données " * 6 + "\n"
        text = line * (size // len(line.encode()))
    cells = analysis_cells()
    cells.append(code("print(everything)", 4, [stream(text)]))
    return dumps(v4(cells))


@contextlib.contextmanager
def one_call() -> Iterator[None]:
    """Every JSON value decoded in one call of the C decoder, as before."""
    kept = _bounded_json.WINDOW
    _bounded_json.WINDOW = 1 << 40
    try:
        yield
    finally:
        _bounded_json.WINDOW = kept


async def held(work: Callable[[], Awaitable[Any]]) -> tuple[float, float]:
    """The longest a 10 ms heartbeat waited past its time during ``work``, and the time
    ``work`` took (seconds)."""
    worst = 0.0
    done = asyncio.Event()

    async def heartbeat() -> None:
        nonlocal worst
        while not done.is_set():
            before = time.perf_counter()
            await asyncio.sleep(BEAT)
            worst = max(worst, time.perf_counter() - before - BEAT)

    beat = asyncio.ensure_future(heartbeat())
    await asyncio.sleep(3 * BEAT)
    worst = 0.0
    started = time.perf_counter()
    await work()
    took = time.perf_counter() - started
    done.set()
    await beat
    return worst, took


async def loop_during_reads(folder: Path, megabytes: float, rounds: int) -> None:
    print(f"The event loop while a notebook with one {megabytes:g} MB output is read:")
    for kind in ("one line", "lines", "non-ASCII lines"):
        path = folder / "huge.ipynb"
        path.write_text(huge_output(kind, megabytes), encoding="utf-8")
        found: dict[str, list[tuple[float, float]]] = {}
        for n in range(rounds):  # interleaved: both see the same machine load
            for mode in ("bounded", "one call"):
                with one_call() if mode == "one call" else contextlib.nullcontext():
                    bridge = FileBridge(path)
                    found.setdefault(f"{mode} read", []).append(await held(bridge.read))
                    cell = (await bridge.read())[1].id
                    edit = functools.partial(bridge.update, cell, f"values = [{n}]")
                    found.setdefault(f"{mode} edit", []).append(await held(edit))
        size = path.stat().st_size / 1e6
        print(f"  {kind} ({size:.0f} MB file):")
        for what in ("read", "edit"):
            worst = {m: statistics.median(h for h, _ in found[f"{m} {what}"]) for m in MODES}
            took = {m: statistics.median(t for _, t in found[f"{m} {what}"]) for m in MODES}
            print(
                f"    {what}  loop waited at most {worst['bounded'] * 1000:6.1f} ms "
                f"(one call: {worst['one call'] * 1000:6.1f} ms, "
                f"{worst['one call'] / max(worst['bounded'], 1e-4):4.1f}× longer)   "
                f"took {took['bounded'] * 1000:7.1f} ms "
                f"({took['bounded'] / took['one call']:.2f}× one call's)"
            )


# --- the first read's decision -----------------------------------------------------------


def before(cells: list[Cell], title: str) -> NotebookView:
    """The first read as it was: the whole view rendered (images downscaled), then the
    outline if it did not fit."""
    if sum(len(c.source) for c in cells) <= WHOLE_CHARS:
        view = render_notebook(cells, title, budget=WHOLE_CHARS)
        if view.next_cell is None and len(view.text) <= WHOLE_CHARS:
            return view
    return render_outline(cells, title)


def now(cells: list[Cell], title: str) -> NotebookView:
    """The first read as ``read_notebook`` makes it."""
    return fits_whole(cells, None, title) or render_outline(cells, title)


def put_together(names: tuple[str, ...], folder: Path) -> Path:
    cells: list[Any] = []
    for name in names:
        nb = json.loads((REAL / name).read_text(encoding="utf-8"))
        cells += [{k: v for k, v in c.items() if k != "id"} for c in nb["cells"]]
    path = folder / "together.ipynb"
    path.write_text(dumps(v4(cells)), encoding="utf-8")
    return path


@contextlib.contextmanager
def counted(calls: list[int]) -> Iterator[None]:
    """Each downscale of an image counted (the seam ``_image`` calls)."""
    real = outputs.downscale

    def downscale(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real(*args, **kwargs)

    outputs.downscale = downscale
    try:
        yield
    finally:
        outputs.downscale = real


async def first_reads(folder: Path, rounds: int) -> None:
    print("read_notebook's first read (the whole notebook if it fits, else the outline):")
    for path in (put_together(LARGE, folder), REAL / BIG_PLOTS, REAL / FITS):
        cells = await FileBridge(path).read()
        times: dict[str, list[float]] = {"now": [], "before": []}
        downscaled: dict[str, int] = {}
        shown: dict[str, str] = {}
        for _ in range(rounds):
            for name, read in (("now", now), ("before", before)):
                calls = [0]
                with counted(calls):
                    started = time.perf_counter()
                    view = read(cells, "Notebook")
                    times[name].append(time.perf_counter() - started)
                downscaled[name] = calls[0]
                shown[name] = "outline" if view.text.count("\n── ") == 0 else "whole"
        median = {name: statistics.median(t) for name, t in times.items()}
        print(
            f"  {path.stat().st_size / 1e3:4.0f} KB, {len(cells)} cells ({shown['now']}): "
            f"{median['now'] * 1000:6.1f} ms, {downscaled['now']} images downscaled   "
            f"before {median['before'] * 1000:6.1f} ms, {downscaled['before']} downscaled   "
            f"before/now {median['before'] / median['now']:5.1f}×"
        )


async def main(megabytes: float = 50, rounds: int = 3) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        await loop_during_reads(Path(tmp), megabytes, rounds)
        await first_reads(Path(tmp), rounds)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=float, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    asyncio.run(main(options.megabytes, options.rounds))
