"""Permission decisions over patterns from settings files, measured in one run.

    .venv/bin/python benchmarks/settings_patterns.py [--rounds 20]

Prints, for one ``Rules.decide`` of a ``read_file`` call (the decision the dispatcher makes,
in a worker thread beside the event loop), the median time, the longest of ``--rounds`` and
the ratio of medians to the built-in rules alone:

* with the built-in rules only;
* with 50 ordinary regex and glob deny rules from a settings file (none matching);
* with one hostile deny rule (``(a|aa)+$``, which backtracks without end on the call's
  path): one match runs out of its time bound (``MATCH_LIMIT``);
* with 100 hostile deny rules: the decision's budget (``DECISION_LIMIT``) bounds them all.

With Python's ``re`` the hostile cases never end. Nothing is asserted: machines here are
shared and noisy, and the numbers are measured side by side in one run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jupyter_agent.config.rules import PathGlob, Regex, Rule, Rules  # noqa: E402
from jupyter_agent.permissions import Permission, ToolCall  # noqa: E402
from jupyter_agent.workspace.patterns import DECISION_LIMIT, MATCH_LIMIT  # noqa: E402

PATH = "a" * 40 + "!"
CALL = ToolCall(
    name="read_file",
    category="read",
    input={"path": PATH},
    summary=f"read {PATH}",
    role="planner",
    permissions=frozenset({Permission.READ_FILES}),
    paths=(PATH,),
)


def rule_sets() -> dict[str, Rules]:
    ordinary = [Rule.deny(Regex(pattern=rf"^secret{i}\b", field="path")) for i in range(25)] + [
        Rule.deny(PathGlob(pattern=f"private{i}/**/*.csv")) for i in range(25)
    ]
    hostile = [Rule.deny(Regex(pattern=f"(a|aa)+{i}?$", field="path")) for i in range(100)]
    return {
        "built-in rules only": Rules.defaults(),
        "50 ordinary regex and glob rules": Rules([*Rules.defaults(), *ordinary]),
        "1 hostile regex rule": Rules([*Rules.defaults(), hostile[0]]),
        "100 hostile regex rules": Rules([*Rules.defaults(), *hostile]),
    }


def main(rounds: int = 20) -> None:
    print(
        f"One decision of a read_file call (bounds: {MATCH_LIMIT * 1000:.0f} ms a match, "
        f"{DECISION_LIMIT * 1000:.0f} ms a decision), {rounds} rounds:"
    )
    base: float | None = None
    for label, rules in rule_sets().items():
        times = []
        for _ in range(rounds):
            started = time.perf_counter()
            decision = rules.decide(CALL)
            times.append(time.perf_counter() - started)
        median = statistics.median(times)
        base = base or median
        print(
            f"  {label:<34} median {median * 1000:8.2f} ms   longest {max(times) * 1000:8.2f} ms"
            f"   {median / base:8.1f}× the built-in rules   → {decision.decision}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    main(parser.parse_args().rounds)
