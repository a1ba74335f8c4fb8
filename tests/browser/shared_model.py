"""A notebook page as the bridge tests drive it: its cells as the shared model holds them,
waits on them, and the notebook's command mode."""

from __future__ import annotations

import json
from typing import Any

# Finds a notebook panel by path among the main area's widgets (as the harness does).
PANEL_OF = """const panelOf = path => Array.from(window.jupyterapp?.shell.widgets('main') ?? [])
  .find(w => w.context?.path === path && w.content?.widgets !== undefined);"""

# The notebook's cells as its shared model holds them.
CELLS = f"""path => {{ {PANEL_OF}
  const model = panelOf(path)?.content.model;
  if (!model) return null;
  return model.sharedModel.cells.map(c => {{
    const json = c.toJSON();
    return {{
      id: c.getId(), cell_type: c.cell_type, source: c.getSource(),
      execution_count: json.execution_count ?? null, outputs: json.outputs ?? []
    }};
  }});
}}"""


def cells(page: Any, path: str) -> list[dict[str, Any]]:
    return page.evaluate(CELLS, path) or []


def wait_for_cells(page: Any, path: str, predicate: str, what: str, timeout: float = 30_000):
    """Wait until the JS ``predicate(cells)`` holds for the notebook's cells in ``page``."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(
            f"path => {{ const cells = ({CELLS})(path); "
            f"return cells !== null && ({predicate})(cells); }}",
            arg=path,
            timeout=timeout,
        )
    except PlaywrightTimeout:
        shown = json.dumps(cells(page, path), indent=1)[:4000]
        raise AssertionError(
            f"{path} in {page.url}: {what} within {timeout / 1000:.0f} s; cells:\n{shown}"
        ) from None
    return cells(page, path)


def command_mode(notebook: Any) -> None:
    """Focus the notebook in command mode, where Z is "Undo Cell Operation"."""
    notebook.cells.first.locator(".jp-InputPrompt").click()
    notebook.page.keyboard.press("Escape")
    notebook.page.wait_for_function(
        f"""path => {{ {PANEL_OF}
          const notebook = panelOf(path).content;
          return notebook.mode === 'command' && notebook.node.contains(document.activeElement);
        }}""",
        arg=notebook.path,
    )
