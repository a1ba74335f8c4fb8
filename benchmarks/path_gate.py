"""What the path gate costs, measured in one run.

    .venv/bin/python benchmarks/path_gate.py [--files 400] [--depth 6] [--rounds 7]

Reads the same files, ``--depth`` folders deep in a temporary workspace, three ways, in
interleaved rounds: plain ``open()`` by path (no check at all), ``realpath`` and a prefix
check then ``open()`` (what a check-then-open reader does), and :meth:`paths.Root.read`
(every folder opened beneath the one before, no link followed out, regular files only).
Prints each one's median per file and the gate's ratio to each, with the spread over
rounds; and the same for an atomic write (``Root.write`` against write-to-temp-and-rename
by path). Nothing is asserted: machines here are shared and noisy.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jupyter_agent.workspace.paths import Root  # noqa: E402


def _plain(path: Path) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _checked(root: Path) -> Callable[[Path], bytes]:
    base = os.path.realpath(root) + os.sep

    def read(path: Path) -> bytes:
        real = os.path.realpath(path)
        if not real.startswith(base):
            raise PermissionError(path)
        with open(real, "rb") as f:
            return f.read()

    return read


def _rename_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _time(read: Callable[[Path], object], files: list[Path]) -> float:
    start = time.perf_counter()
    for file in files:
        read(file)
    return (time.perf_counter() - start) / len(files)


def main(files: int = 400, depth: int = 6, rounds: int = 7) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        folder = workspace.joinpath(*(f"level{n}" for n in range(depth)))
        folder.mkdir(parents=True)
        paths = []
        for n in range(files):
            path = folder / f"file{n}.txt"
            path.write_bytes(b"x" * 2048)
            paths.append(path)
        gate = Root(workspace)
        readers: dict[str, Callable[[Path], object]] = {
            "open() by path": _plain,
            "realpath check, then open()": _checked(workspace),
            "paths.Root.read": lambda p: gate.read(p),
        }
        times: dict[str, list[float]] = {name: [] for name in readers}
        for _ in range(rounds):
            for name, read in readers.items():
                times[name].append(_time(read, paths))
        writes: dict[str, list[float]] = {"temp file + rename by path": [], "paths.Root.write": []}
        for _ in range(rounds):
            writes["temp file + rename by path"].append(
                _time(lambda p: _rename_write(p, b"y" * 2048), paths[:100])
            )
            writes["paths.Root.write"].append(
                _time(lambda p: gate.write(p, b"y" * 2048, durable=False), paths[:100])
            )
        print(f"Reading {files} files of 2 KB, {depth} folders deep, {rounds} rounds:")
        _report(times, "paths.Root.read")
        print("Replacing 100 of them atomically (no fsync):")
        _report(writes, "paths.Root.write")


def _report(times: dict[str, list[float]], gate: str) -> None:
    ours = times[gate]
    for name, values in times.items():
        line = f"  {name:<30} median {statistics.median(values) * 1e6:8.1f} µs per file"
        if name != gate:
            ratios = sorted(a / b for a, b in zip(ours, values, strict=True))
            line += (
                f"   gate ÷ this: {statistics.median(ratios):.2f}× "
                f"(rounds {ratios[0]:.2f}–{ratios[-1]:.2f}×)"
            )
        print(line)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=400)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    main(args.files, args.depth, args.rounds)
