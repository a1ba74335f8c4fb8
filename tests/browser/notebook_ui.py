"""A notebook open in the browser tests' JupyterLab page, driven the way a person does:
``NotebookUI`` types into cells, runs them with Shift+Enter, restarts or changes the
kernel through the menus, and reads what the page shows. ``open_notebook_in`` and
``open_in_page`` write a notebook under the server root and open it in a page (the
``open_notebook`` and ``open_another`` fixtures).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from browser_pages import PAGE_TIMEOUT
from lab_server import LabServer

# Bounds on waits, generous for a 2-core runner shared by two test processes: a wait ends
# as soon as its condition holds, so a bound only decides how long a failure takes to show.
KERNEL_TIMEOUT = 90_000  # ms: a kernel starting, restarting or going idle
CELL_TIMEOUT = 60_000  # ms: one cell running

# JavaScript run in the page. Each function takes the notebook's path and finds its panel
# among the main area's widgets, so nothing depends on which tab is current.
_PANEL_OF = """const panelOf = path => Array.from(window.jupyterapp?.shell.widgets('main') ?? [])
  .find(w => w.context?.path === path && w.content?.widgets !== undefined);"""

PANEL_ID = f"""path => {{ {_PANEL_OF}
  return panelOf(path)?.id ?? null;
}}"""

_KERNEL_STATE = f"""path => {{ {_PANEL_OF}
  const kernel = panelOf(path)?.sessionContext.session?.kernel;
  return kernel ? `${{kernel.status}}/${{kernel.connectionStatus}}` : 'no kernel';
}}"""

_KERNEL_ID = f"""path => {{ {_PANEL_OF}
  return panelOf(path)?.sessionContext.session?.kernel?.id ?? null;
}}"""

_KERNEL_IDLE = f"path => ({_KERNEL_STATE})(path) === 'idle/connected'"

# Restarts are quick: count them from the kernel's own signal rather than hoping to
# catch the status between two polls.
_COUNT_RESTARTS = f"""path => {{ {_PANEL_OF}
  const kernel = panelOf(path).sessionContext.session.kernel;
  window.__testRestarts = 0;
  kernel.statusChanged.connect((_, status) => {{
    if (status === 'restarting' || status === 'autorestarting') window.__testRestarts++;
  }});
}}"""

_CELL_SOURCE = f"""([path, index]) => {{ {_PANEL_OF}
  return panelOf(path).content.widgets[index]?.model.sharedModel.getSource() ?? null;
}}"""

# Every cell of the model is in the page: a notebook just opened renders its cells a batch
# at a time, and until then the page's last cell is not the notebook's.
_ALL_CELLS_SHOWN = f"""path => {{ {_PANEL_OF}
  const panel = panelOf(path);
  return panel.content.widgets.length === panel.model.cells.length
    && panel.node.querySelectorAll('.jp-Notebook .jp-Cell').length === panel.model.cells.length;
}}"""

_CELL_OUTPUTS = f"""([path, index]) => {{ {_PANEL_OF}
  return panelOf(path).content.widgets[index].model.toJSON().outputs ?? [];
}}"""


@dataclass
class NotebookUI:
    """One open notebook, driven through the page the way a person does."""

    page: Any
    path: str
    panel_id: str

    @property
    def panel(self) -> Any:
        return self.page.locator(f'[id="{self.panel_id}"]')

    @property
    def cells(self) -> Any:
        return self.panel.locator(".jp-Notebook .jp-Cell")

    def kernel_state(self) -> str:
        return str(self.page.evaluate(_KERNEL_STATE, self.path))

    def wait_for_kernel_idle(self, timeout: float = KERNEL_TIMEOUT) -> None:
        """Wait until the notebook's kernel is idle and connected, and its toolbar says so."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        try:
            self.page.wait_for_function(_KERNEL_IDLE, arg=self.path, timeout=timeout)
            self.panel.locator('.jp-Notebook-ExecutionIndicator[data-status="idle"]').wait_for(
                timeout=timeout
            )
        except PlaywrightTimeout:
            raise AssertionError(
                f"the kernel of {self.path} was not idle within {timeout / 1000:.0f} s "
                f"(kernel: {self.kernel_state()})"
            ) from None

    def run_cell(
        self, code: str, *, timeout: float = CELL_TIMEOUT, allow_error: bool = False
    ) -> str:
        """Type ``code`` into the last cell (into a new one below if the last is not empty),
        press Shift+Enter, wait for it to finish and return the text its outputs show.
        A cell that raises fails the test unless ``allow_error``."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout
        from playwright.sync_api import expect

        self.wait_for_kernel_idle()
        self.page.wait_for_function(_ALL_CELLS_SHOWN, arg=self.path, timeout=PAGE_TIMEOUT)
        index = self.cells.count() - 1
        cell = self.cells.nth(index)
        editor = cell.locator(".cm-content")
        editor.click()
        if self.page.evaluate(_CELL_SOURCE, [self.path, index]):
            self.page.keyboard.press("Escape")
            self.page.keyboard.press("b")  # command mode: insert a cell below
            index += 1
            cell = self.cells.nth(index)
            editor = cell.locator(".cm-content")
            editor.click()
        # Inserted as one input event, as a paste is: typed key by key, the editor would
        # indent every line after a colon a second time.
        self.page.keyboard.insert_text(code)
        try:
            self.page.wait_for_function(
                f"([path, index, code]) => ({_CELL_SOURCE})([path, index]) === code",
                arg=[self.path, index, code],
                timeout=5_000,
            )
        except PlaywrightTimeout:
            shown = self.page.evaluate(_CELL_SOURCE, [self.path, index])
            raise AssertionError(
                f"cell {index} of {self.path} holds {shown!r} after typing {code!r}"
            ) from None
        self.page.keyboard.press("Shift+Enter")
        try:
            expect(cell.locator(".jp-InputPrompt")).to_have_text(
                re.compile(r"\[\d+\]"), timeout=timeout
            )
        except AssertionError:
            raise AssertionError(
                f"cell {index} of {self.path} did not finish within {timeout / 1000:.0f} s "
                f"(kernel: {self.kernel_state()}); it shows:\n{self._output_text(cell)}"
            ) from None
        self.wait_for_kernel_idle()
        text = self._output_text(cell)
        outputs = self.page.evaluate(_CELL_OUTPUTS, [self.path, index])
        errors = [output for output in outputs if output["output_type"] == "error"]
        if errors and not allow_error:
            error = errors[0]
            raise AssertionError(
                f"cell {index} of {self.path} raised {error['ename']}: {error['evalue']}\n{text}"
            )
        return text

    def run_from(self, index: int, command: str) -> None:
        """Select cell ``index`` and run a notebook command on it, as a reader does with
        Run → Run Selected Cell and All Below (``notebook:run-all-below``) and the like."""
        self.page.evaluate(
            f"""async ([path, index, command]) => {{ {_PANEL_OF}
                panelOf(path).content.activeCellIndex = index;
                await window.jupyterapp.commands.execute(command);
            }}""",
            [self.path, index, command],
        )

    def save(self) -> None:
        """Save the notebook (File → Save), so a reloaded page shows what it shows now."""
        self.page.evaluate(
            f"async path => {{ {_PANEL_OF} await panelOf(path).context.save(); }}", self.path
        )

    def restart_kernel(self) -> None:
        """Kernel menu → Restart Kernel… → Restart, then wait for the kernel."""
        self.page.evaluate(_COUNT_RESTARTS, self.path)
        self.page.get_by_role("menuitem", name="Kernel", exact=True).click()
        self.page.get_by_role("menuitem", name=re.compile(r"^Restart Kernel…")).first.click()
        # The dialog's button reads "Restart"; its accessible name is this.
        self.page.get_by_role("button", name="Confirm Kernel Restart").click()
        self.page.wait_for_function("() => window.__testRestarts > 0", timeout=KERNEL_TIMEOUT)
        self.wait_for_kernel_idle()

    def change_kernel(self, kernel_name: str = "python3") -> None:
        """Kernel menu → Change Kernel… → start a new ``kernel_name`` kernel → Select: a new
        kernel, hence a new kernel connection. Waits for it to be idle."""
        before = self.page.evaluate(_KERNEL_ID, self.path)
        self.page.get_by_role("menuitem", name="Kernel", exact=True).click()
        self.page.get_by_role("menuitem", name=re.compile(r"^Change Kernel…")).first.click()
        # The dialog preselects the running kernel; its options' values are JSON.
        self.page.get_by_role("dialog").locator("select").select_option(
            value=json.dumps({"name": kernel_name}, separators=(",", ":"))
        )
        self.page.get_by_role("button", name="Select Kernel").click()
        self.page.wait_for_function(
            f"([path, before]) => ({_KERNEL_ID})(path) !== before",
            arg=[self.path, before],
            timeout=KERNEL_TIMEOUT,
        )
        self.wait_for_kernel_idle()

    @staticmethod
    def _output_text(cell: Any) -> str:
        return "\n".join(cell.locator(".jp-OutputArea-output").all_inner_texts()).strip()


def open_in_page(
    page: Any, lab: LabServer, path: str, sources: list[str] | None, mode: str
) -> NotebookUI:
    """The ``open_another`` fixture's work: write the notebook under ``lab``'s root and
    open it in the JupyterLab ``page`` shows."""
    lab.write_notebook(path, sources)
    return open_in_loaded_lab(page, path, mode)


def open_in_loaded_lab(page: Any, path: str, mode: str = "tab-after") -> NotebookUI:
    """Open the notebook at ``path`` in the JupyterLab ``page`` shows, as File → Open does,
    and wait for its kernel."""
    # The command's result is the widget: returned, Playwright would copy its whole object
    # graph out of the page (minutes on a loaded machine), so nothing is returned.
    page.evaluate(
        "([path, mode]) => window.jupyterapp.commands.execute('docmanager:open', "
        "{path, options: {mode}}).then(() => null)",
        [path, mode],
    )
    handle = page.wait_for_function(PANEL_ID, arg=path, timeout=PAGE_TIMEOUT)
    notebook = NotebookUI(page=page, path=path, panel_id=str(handle.json_value()))
    page.evaluate(_CLOSE_LAUNCHERS)
    notebook.cells.first.wait_for()
    notebook.wait_for_kernel_idle()
    return notebook


# JupyterLab shows a Launcher whenever its main area empties (the previous test's notebooks
# closed): the notebook opened, it goes, as in JupyterLab opened on that notebook.
_CLOSE_LAUNCHERS = """() => {
  for (const widget of Array.from(window.jupyterapp.shell.widgets('main'))) {
    if (widget.id.startsWith('launcher-')) widget.dispose();
  }
}"""


def shows_lab(page: Any, lab: LabServer) -> bool:
    """Whether ``page`` shows a started JupyterLab of ``lab`` (not Notebook 7, not blank)."""
    if not page.url.startswith(f"{lab.url}/lab"):
        return False
    return bool(
        page.evaluate(
            "async () => window.jupyterapp?.name === 'JupyterLab'"
            " && (await window.jupyterapp.restored, true)"
        )
    )


def open_notebook_in(
    page: Any,
    lab: LabServer,
    path: str,
    sources: list[str] | None = None,
    *,
    ui: str = "lab",
    write: bool = True,
) -> NotebookUI:
    """The ``open_notebook`` fixture's work, in ``page`` on ``lab``."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    if write:
        lab.write_notebook(path, sources)
    if ui == "lab" and shows_lab(page, lab):
        return open_in_loaded_lab(page, path)
    if ui == "notebook":  # Jupyter Notebook 7's page for one notebook
        page.goto(f"{lab.url}/notebooks/{quote(path)}")
    else:
        page.goto(f"{lab.url}/lab/tree/{quote(path)}?reset")
    try:
        handle = page.wait_for_function(PANEL_ID, arg=path, timeout=PAGE_TIMEOUT)
    except PlaywrightTimeout:
        raise AssertionError(
            f"JupyterLab did not open {path} within {PAGE_TIMEOUT / 1000:.0f} s"
        ) from None
    notebook = NotebookUI(page=page, path=path, panel_id=str(handle.json_value()))
    page.evaluate("() => { window.__jaLoadedForTests = true; }")  # gone if a test reloads
    notebook.cells.first.wait_for()
    notebook.wait_for_kernel_idle()
    return notebook
