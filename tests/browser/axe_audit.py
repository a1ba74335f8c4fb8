"""Accessibility audits of the panel: axe-core (the engine behind the browsers' own audits)
finds the serious and critical violations inside an element, each reduced to its rule, its
impact, its help text and where it is; ``lowest_contrast`` finds its least readable text;
``change_theme`` switches JupyterLab's theme and waits for it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import expect

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


def violation_lines(page: Any, element: Any, theme: str) -> list[str]:
    """:func:`violations` inside ``element``, one line each for a failure message."""
    return [
        f"{theme}: {v['impact']} {v['rule']}: {v['help']} at {v['where']}"
        for v in violations(page, element)
    ]


THEMES = ["JupyterLab Light", "JupyterLab Dark"]

# The lowest contrast between any text in the panel and what is behind it (WCAG's ratio:
# 21 is black on white, 1 is invisible). Backgrounds are composited up the tree, since
# the panel's tints are translucent; colours are read back through a canvas, which
# resolves every CSS colour syntax to RGBA.
LOWEST_CONTRAST = """panel => {
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 1;
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  const rgba = css => {
    ctx.clearRect(0, 0, 1, 1);
    ctx.fillStyle = css;
    ctx.fillRect(0, 0, 1, 1);
    const [r, g, b, a] = ctx.getImageData(0, 0, 1, 1).data;
    return [r, g, b, a / 255];
  };
  const over = ([r, g, b, a], [R, G, B]) => [r * a + R * (1 - a), g * a + G * (1 - a), b * a + B * (1 - a)];
  const behind = el => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) layers.push(c);
      if (c[3] >= 1) break;
    }
    return layers.reverse().reduce((bg, layer) => over(layer, bg), [255, 255, 255]);
  };
  const lum = rgb => {
    const f = v => (v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    return 0.2126 * f(rgb[0]) + 0.7152 * f(rgb[1]) + 0.0722 * f(rgb[2]);
  };
  let worst = [99, ''];
  for (const el of panel.querySelectorAll('*')) {
    const own = Array.from(el.childNodes).some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own || !el.getClientRects().length) continue;
    const bg = behind(el);
    const fg = over(rgba(getComputedStyle(el).color), bg);
    const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
    const ratio = (hi + 0.05) / (lo + 0.05);
    if (ratio < worst[0]) worst = [ratio, `${el.className || el.tagName}: ${el.textContent.trim().slice(0, 40)}`];
  }
  return worst;
}"""


def lowest_contrast(panel: Any) -> tuple[float, str]:
    """The lowest contrast ratio of any text in ``panel``, and which text it is."""
    ratio, where = panel.evaluate(LOWEST_CONTRAST)
    return float(ratio), str(where)


def change_theme(page: Any, theme: str) -> None:
    page.evaluate(
        "theme => window.jupyterapp.commands.execute('apputils:change-theme', {theme})", theme
    )
    expect(page.locator("body")).to_have_attribute("data-jp-theme-name", theme)
    # JupyterLab covers the page with its splash while it swaps the theme's styles: the
    # theme is in place, and the page usable again, once the splash is gone.
    expect(page.locator("#jupyterlab-splash")).to_have_count(0)
