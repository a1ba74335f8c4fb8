"""The README and the reference in docs/ hold as written: the README's Python example runs,
every Python example in docs/ runs, every settings example (TOML or JSON) in them is a
settings file the agent loads, and every link between them reaches a file and a heading
that exist."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from jupyter_agent.admin_policy import SYSTEM_POLICY, read_policy
from jupyter_agent.config.settings import load_settings

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [README, ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md", *DOCS]
# docs/ pages of the user's reference: each a settings example is a file the agent reads
REFERENCE = [page for page in DOCS if page.name not in ("architecture.md", "notebook-bridge.md")]


def _blocks(page: Path, language: str) -> list[str]:
    return re.findall(rf"^ *```{language}\n(.*?)^ *```", page.read_text(), re.DOTALL | re.M)


def _examples(language: str, pages: list[Path]) -> list[Any]:  # pytest.param()s
    return [
        pytest.param(block, id=f"{page.name}-{n}")
        for page in pages
        for n, block in enumerate(_blocks(page, language), 1)
    ]


def test_the_readme_python_example_runs(tmp_path):
    blocks = _blocks(README, "python")
    assert blocks, "the README has no Python example"
    result = subprocess.run(
        [sys.executable, "-c", blocks[0]], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "Drop duplicate rows" in result.stdout
    assert "completed - Removed 3 duplicate rows." in result.stdout
    assert "| 1 | Drop duplicate rows |" in result.stdout  # the renderer printed the plan
    assert (tmp_path / ".jupyter_agent" / "sessions").is_dir()


def test_every_python_example_in_docs_runs(tmp_path):
    # One test over every page (not one per example): a page without Python examples is
    # nothing to skip, and an example added later runs here at once.
    for page in DOCS:
        for n, example in enumerate(_blocks(page, "python"), 1):
            result = subprocess.run(
                [sys.executable, "-c", example],
                cwd=tmp_path,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert result.returncode == 0, f"{page.name} example {n}:\n{result.stderr}"


@pytest.mark.parametrize("example", _examples("toml", [README, *REFERENCE]))
def test_every_toml_settings_example_loads(example, tmp_path):
    text = textwrap.dedent(example)
    if text.startswith(f"# {SYSTEM_POLICY}"):  # an administrator's policy, not settings
        path = tmp_path / "policy.toml"
        path.write_text(text)
        assert read_policy(path).sources == (path,)
        return
    path = tmp_path / "settings.toml"
    path.write_text(text)
    load_settings(path)


@pytest.mark.parametrize("example", _examples("json", [README, *REFERENCE]))
def test_every_json_settings_example_loads(example, tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(textwrap.dedent(example))
    load_settings(path)


def test_the_reference_has_settings_examples():
    assert len(_examples("toml", REFERENCE)) >= 4
    assert _examples("json", REFERENCE)


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"^ *```.*?^ *```", "", page.read_text(), flags=re.DOTALL | re.M)
    return {_slug(h) for h in re.findall(r"^#+ (.+)$", text, re.M)}


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_link_reaches_a_file_and_heading(page):
    text = page.read_text()
    links = re.findall(r"\]\(([^)\s]+)\)", text) + re.findall(r'<img src="([^"]+)"', text)
    broken = []
    for link in links:
        if re.match(r"[a-z]+:", link):
            continue  # a web address
        target, _, anchor = link.partition("#")
        file = (page.parent / target).resolve() if target else page
        if not file.exists() or (file.suffix == ".md" and anchor not in {"", *_anchors(file)}):
            broken.append(link)
    assert not broken, f"{page.name}: links to nothing: {broken}"


def test_the_readme_links_every_page_of_the_reference():
    text = README.read_text()
    assert [page.name for page in DOCS if f"(docs/{page.name})" not in text] == []


def test_ci_runs_the_readme_test_command():
    ci = (README.parent / ".ci" / "run").read_text()
    assert "make test" in ci
    assert "make test" in README.read_text()
