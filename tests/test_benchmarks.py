"""The framework benchmark runs and reports every measurement (its figures are printed,
never asserted: this only keeps the command working)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # the benchmarks, run

BENCHMARK = Path(__file__).resolve().parent.parent / "benchmarks" / "framework.py"


def load_benchmark():
    spec = importlib.util.spec_from_file_location("framework_benchmark", BENCHMARK)
    assert spec is not None and spec.loader is not None
    benchmark = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(benchmark)
    return benchmark


async def test_the_framework_benchmark_reports_each_measurement(monkeypatch, capsys):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "benchmark-key")
    benchmark = load_benchmark()

    await benchmark.main(samples=2, rounds=2, paced_rounds=1, paces=(0.0,))

    out = capsys.readouterr().out
    for situation in (
        "while streaming",
        "while a tool awaits",
        "while waiting for an answer",
        "while reading huge outputs",
    ):
        assert re.search(rf"{situation} +p50 +[\d.]+ ms +p95 +[\d.]+ ms", out), out
    for label in (
        "raw stream events",
        "SDK stream helper",
        "jupyter_agent model layer",
        "jupyter_agent loop",
    ):
        assert re.search(rf"{label} +median +[\d.]+ ms", out), out
    assert len(re.findall(r"ratio of medians [\d.]+×", out)) == 3, out
    intervals = re.findall(r"95% interval ([\d.]+)–([\d.]+)×", out)
    assert len(intervals) == 3 and all(float(a) <= float(b) for a, b in intervals), out
    assert len(re.findall(r"— (within|above|not told apart from) 1.05×", out)) == 2, out
    assert "— the agent's bookkeeping" in out, out
    shares = [float(s) for s in re.findall(r"s\d+:([\d.]+)", out)]
    assert len(shares) == 9 and all(0 < s <= 1 for s in shares), out


def test_the_verdict_on_the_target_comes_from_the_interval_not_a_single_figure(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "benchmark-key")
    benchmark = load_benchmark()
    steady = [1.02, 1.03, 1.03, 1.04, 1.03] * 8
    low, high = benchmark.median_interval(steady)
    assert 1.02 <= low <= 1.03 <= high <= 1.04
    assert benchmark.verdict(low, high, 1.05) == "within 1.05×"
    assert benchmark.verdict(1.06, 1.09, 1.05) == "above 1.05×"
    assert benchmark.verdict(1.03, 1.07, 1.05).startswith("not told apart from 1.05×")


async def test_the_context_benchmark_reports_cost_and_cache_share(monkeypatch, capsys):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "benchmark-key")
    spec = importlib.util.spec_from_file_location(
        "context_benchmark", BENCHMARK.with_name("context.py")
    )
    assert spec is not None and spec.loader is not None
    benchmark = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(benchmark)

    await benchmark.main(steps=20, window=20_000)

    out = capsys.readouterr().out
    for label in ("managed", "unmanaged"):
        assert re.search(rf"{label} +\d+ requests +input +[\d,]+ tokens +billed as", out), out
    assert re.search(r"input tokens, managed / unmanaged: [\d.]+× +billed: [\d.]+×", out), out
    found = re.search(r"\((?:window [\d,]+), (\d+) compactions, 0 refusals\): mean ([\d.]+)", out)
    assert found and int(found[1]) >= 1, out  # the small window made it compact


def test_the_session_search_benchmark_reports_each_measurement(capsys):
    spec = importlib.util.spec_from_file_location(
        "sessions_benchmark", BENCHMARK.with_name("sessions.py")
    )
    assert spec is not None and spec.loader is not None
    benchmark = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(benchmark)

    benchmark.main(sessions=5, messages=8, rounds=2)

    out = capsys.readouterr().out
    assert re.search(r"the hook's cost on the loop +[+-][\d.]+ µs", out), out
    assert len(re.findall(r"p50 +[\d.]+ ms +p99 +[\d.]+ ms +max +[\d.]+ ms", out)) == 4, out
    assert re.search(r"rebuilt from histories +[\d.]+ s", out), out
    assert len(re.findall(r"ms +\(\d+ found\)", out)) == 5, out


def _benchmark(name: str):
    spec = importlib.util.spec_from_file_location(f"{name}_benchmark", BENCHMARK.with_name(name))
    assert spec is not None and spec.loader is not None
    benchmark = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(benchmark)
    return benchmark


async def test_the_masked_search_benchmark_reports_each_measurement(capsys):
    await _benchmark("masked_search.py").main(files=20, lines=50, rounds=1)

    out = capsys.readouterr().out
    found = re.findall(
        r"real text +[\d.]+ ms +masked, first time +[\d.]+ ms \([\d.]+×\) +again +[\d.]+ ms",
        out,
    )
    assert len(found) == 2, out
    assert re.search(r"anchored +[\d.]+ MB/s +tried everywhere +[\d.]+ MB/s +speed-up", out), out


async def test_the_tool_input_benchmark_reports_each_measurement(capsys):
    await _benchmark("tool_input.py").main(megabytes=0.5, rounds=1)

    out = capsys.readouterr().out
    for client in ("anthropic", "openai"):
        assert f"{client} client, a 0.5 MB command:" in out, out
    assert len(re.findall(r"loop held at most +[\d.]+ ms", out)) == 6, out
    assert len(re.findall(r"limit lifted / limit: held [\d.]+×, turn [\d.]+×", out)) == 2, out


def test_the_path_gate_benchmark_reports_each_ratio(capsys):
    _benchmark("path_gate.py").main(files=5, depth=2, rounds=2)

    out = capsys.readouterr().out
    assert len(re.findall(r"median +[\d.]+ µs per file", out)) == 5, out
    assert len(re.findall(r"gate ÷ this: [\d.]+× \(rounds [\d.]+–[\d.]+×\)", out)) == 3, out


def test_the_settings_patterns_benchmark_reports_each_rule_set(capsys):
    _benchmark("settings_patterns.py").main(rounds=1)

    out = capsys.readouterr().out
    found = re.findall(r"median +[\d.]+ ms +longest +[\d.]+ ms +[\d.]+× the built-in rules", out)
    assert len(found) == 4, out


def test_the_busy_cell_benchmark_reports_stop_latency_and_throughput(monkeypatch, capsys):
    """benchmarks/busy_cell.py, briefly: a real kernel, Stop and streaming during a cell."""
    folder = BENCHMARK.parent
    monkeypatch.syspath_prepend(str(folder))
    spec = importlib.util.spec_from_file_location("busy_cell_benchmark", folder / "busy_cell.py")
    assert spec is not None and spec.loader is not None
    benchmark = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(benchmark)

    benchmark.main(samples=2, seconds=0.5)

    out = capsys.readouterr().out
    for situation in ("idle kernel", "during a time.sleep cell"):
        assert re.search(rf"{situation} +p50 +[\d.]+ ms +p95 +[\d.]+ ms", out), out
        assert re.search(rf"{situation} +\d+ chars/s +[\d.]+ messages/s", out), out
    assert re.search(r"no subshell \(fallback\) +one sample +\d+ ms", out), out
    assert re.search(r"ratio busy/idle +[\d.]+×", out), out


async def test_the_notebook_parse_benchmark_reports_each_measurement(capsys):
    """benchmarks/notebook_parse.py, briefly: a 2 MB output (still decoded in steps)."""
    await _benchmark("notebook_parse.py").main(megabytes=2, rounds=1)

    out = capsys.readouterr().out
    waits = re.findall(
        r"(?:read|edit)  loop waited at most +[\d.]+ ms \(one call: +[\d.]+ ms, +[\d.]+× longer\)",
        out,
    )
    assert len(waits) == 6, out
    assert len(re.findall(r"before/now +[\d.]+×", out)) == 3, out
