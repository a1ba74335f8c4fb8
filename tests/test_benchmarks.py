"""The framework benchmark runs and reports every measurement (its figures are printed,
never asserted: this only keeps the command working)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

BENCHMARK = Path(__file__).resolve().parent.parent / "benchmarks" / "framework.py"


async def test_the_framework_benchmark_reports_each_measurement(monkeypatch, capsys):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "benchmark-key")
    spec = importlib.util.spec_from_file_location("framework_benchmark", BENCHMARK)
    assert spec is not None and spec.loader is not None
    benchmark = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(benchmark)

    await benchmark.main(samples=2, rounds=1, paces=(0.0,))

    out = capsys.readouterr().out
    for situation in ("while streaming", "while a tool awaits", "while waiting for an answer"):
        assert re.search(rf"{situation} +p50 +[\d.]+ ms +p95 +[\d.]+ ms", out), out
    for label in ("raw stream events", "SDK stream helper", "jupyter_agent loop"):
        assert re.search(rf"{label} +median +[\d.]+ ms", out), out
    assert len(re.findall(r"ratio of medians [\d.]+×", out)) == 2, out
    shares = [float(s) for s in re.findall(r"s\d+:([\d.]+)", out)]
    assert len(shares) == 9 and all(0 < s <= 1 for s in shares), out
