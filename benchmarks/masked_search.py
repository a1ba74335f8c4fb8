"""What searching the files as the model reads them (secrets masked) costs, in one run.

    .venv/bin/python benchmarks/masked_search.py [--files 400] [--lines 500] [--rounds 5]

grep searches each file as the model would read it (``tools/_masked.py``), so that no
match can tell of a hidden value. Prints, for a workspace of ``--files`` Python-like files
(one in ten holding a secret), the median time of a grep for a rare word and for a common
one (which stops at 5,000 matches):

* searching the real text with the same code (a masker with no passes: grep as it was);
* searching the masked view the first time (every file masked), and its ratio;
* searching it again (files that showed nothing hidden are remembered until they change;
  the others are masked again), and its ratio;

and the masking alone, in MB/s: the passes as they run (each slow pattern tried only where
a match can begin) beside the same patterns tried at every position, and their ratio.

Nothing is asserted: machines here are shared and noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import regex  # noqa: E402

from jupyter_agent.secrets import shapes  # noqa: E402
from jupyter_agent.secrets.redacted import fold  # noqa: E402
from jupyter_agent.secrets.redaction import Masker, Secrets  # noqa: E402
from jupyter_agent.tools._file_search import _grep  # noqa: E402
from jupyter_agent.tools._masked import CLEAN_FILES  # noqa: E402
from jupyter_agent.workspace.access import WorkspaceAccess  # noqa: E402

TOKEN = "Xq9zT4k1Lm8Rw2Vb7Nc5Hd3Gf6Js0Pa4Qe1"
CODE = [
    "import pandas as pd",
    "def load(path, columns=None):",
    "    frame = pd.read_csv(path, usecols=columns)",
    "    return frame.dropna(subset=['region', 'amount'])",
    "for key, value in settings.items():",
    "    logger.info('%s = %s', key, value)",
    "total = sum(row.amount for row in rows if row.region == 'north')",
    "# keep the monkey patching of the tokenizer local to this module",
    "url = f'https://api.example.com/v1/{endpoint}?page={page}'",
    "class Report:",
    '    """Monthly sales report, one row per region."""',
    "    def __init__(self, frame):",
    "        self.frame = frame",
    "",
]
SECRETS = [
    f"WAREHOUSE_TOKEN = '{TOKEN}'",
    "password = 'hunter22-staging'",
    "DATABASE_URL = 'postgresql://analyst:Sup3r-S3cret@db.internal:5432/sales'",
    "github = 'ghp_Kd83hfQ0zPl2mW9xYv4tR7sB1nC6aE5uJ8gH'",
]


class _Unmasked(Secrets):
    """A redaction with no passes: the search as it was, for comparison."""

    def masker(self) -> Masker:
        return Masker(())


def _workspace(folder: Path, files: int, lines: int) -> int:
    rng = random.Random(7)
    size = 0
    for i in range(files):
        body = [rng.choice(CODE) for _ in range(lines)]
        if i % 10 == 0:  # one file in ten holds a secret or two
            body[rng.randrange(lines)] = rng.choice(SECRETS)
        text = "\n".join(body) + "\n"
        sub = folder / f"pkg{i % 20}"
        sub.mkdir(exist_ok=True)
        (sub / f"module{i}.py").write_text(text)
        size += len(text)
    return size


def _times(first: Callable[[], Any], second: Callable[[], Any], rounds: int) -> tuple[float, float]:
    """Median seconds of each, measured in turns (a busy machine slows both alike)."""
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(rounds):
        for fn, kept in ((first, times[0]), (second, times[1])):
            start = time.perf_counter()
            fn()
            kept.append(time.perf_counter() - start)
    return statistics.median(times[0]), statistics.median(times[1])


def _search(sandbox: WorkspaceAccess, secrets: Secrets, pattern: str) -> Callable[[], Any]:
    compiled = regex.compile(pattern)
    return lambda: _grep(threading.Event(), sandbox, secrets, compiled, ".", None, None, 5000)


def _everywhere() -> tuple[Any, ...]:
    """The shape passes with every pattern tried at every position (as ``re.sub`` does)."""
    return tuple(p.everywhere if isinstance(p, shapes.Anchored) else p for p in shapes.MASK_PASSES)


async def main(files: int = 400, lines: int = 500, rounds: int = 5) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        size = _workspace(folder, files, lines)
        sandbox = WorkspaceAccess(folder)
        masked = Secrets(lambda: {"WAREHOUSE_TOKEN": TOKEN})
        print(f"workspace: {files:,} files, {size / 1e6:.1f} MB, one in ten holding a secret")
        for label, pattern in (("rare word", r"Monthly"), ("common word", r"frame")):
            plain_search = _search(sandbox, _Unmasked(), pattern)
            masked_search = _search(sandbox, masked, pattern)

            def first_time(search: Callable[[], Any] = masked_search) -> None:
                CLEAN_FILES.forget()  # nothing remembered: every file masked
                search()

            plain, cold = _times(plain_search, first_time, rounds)
            plain_again, warm = _times(plain_search, masked_search, rounds)
            print(
                f"grep {label:<12} real text {plain * 1000:7.1f} ms   masked, first time "
                f"{cold * 1000:7.1f} ms ({cold / plain:.2f}×)   again {warm * 1000:7.1f} ms "
                f"({warm / plain_again:.2f}×)"
            )
        text = "\n".join((folder / "pkg0" / "module0.py").read_text() for _ in range(20))
        anchored, everywhere = _times(
            lambda: fold(text, shapes.MASK_PASSES, keep_map=False),
            lambda: fold(text, _everywhere(), keep_map=False),
            rounds,
        )
        mb = len(text) / 1e6
        print(
            f"masking {mb:.1f} MB: anchored {mb / anchored:6.1f} MB/s   tried everywhere "
            f"{mb / everywhere:6.1f} MB/s   speed-up {everywhere / anchored:.1f}×"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=400)
    parser.add_argument("--lines", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    asyncio.run(main(options.files, options.lines, options.rounds))
