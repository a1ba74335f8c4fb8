"""Accessibility audits of the panel with axe-core (the engine behind the browsers' own
audits): the serious and critical violations inside an element, each reduced to its rule,
its impact, its help text and where it is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

AXE = Path(__file__).resolve().parents[2] / "js" / "node_modules" / "axe-core" / "axe.min.js"

# axe's own result, reduced to what a failure message needs.
RUN_AXE = """async element => {
  const result = await window.axe.run(element, { resultTypes: ['violations'] });
  return result.violations
    .filter(v => v.impact === 'serious' || v.impact === 'critical')
    .map(v => ({
      rule: v.id,
      impact: v.impact,
      help: v.help,
      where: v.nodes.slice(0, 3).map(n => n.target.join(' ')),
    }));
}"""


def violations(page: Any, panel: Any) -> list[dict[str, Any]]:
    if not page.evaluate("() => 'axe' in window"):
        page.add_script_tag(path=str(AXE))
    found: list[dict[str, Any]] = panel.evaluate(RUN_AXE)
    return found
