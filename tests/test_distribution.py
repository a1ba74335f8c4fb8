"""The distribution installs from its wheel on a machine without Node.js.

The sdist is built from this tree with node and npm off PATH, and the wheel from the sdist
(as a user's pip builds one from it), so the build hook must reuse the prebuilt lab
extension (``skip-if-exists``), never rebuild it. The wheel then goes into a fresh virtual
environment, again without node, and is checked from a folder outside the source tree: the
package imports from that environment, the lab extension is listed there as enabled and OK,
and pip knows the distribution by its own name.

What this checks is ours: the artifacts' files and where they land. So the build runs in
this environment (``--no-isolation``, after ``build`` checked the build requirements are
there), and the fresh environment takes the wheel alone, reading the dependencies from this
one's site-packages (a path line, so this tree's editable install is not seen): resolving
and downloading them is pip's job, and took two thirds of the suite's time.

Needs the built extension in jupyter_agent/labextension (``make install`` builds it).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
NAME = PROJECT["name"]
_VERSION_LINE = re.search(
    r'^__version__ = "([^"]+)"', (ROOT / "jupyter_agent" / "__init__.py").read_text(), re.M
)
assert _VERSION_LINE is not None, "jupyter_agent/__init__.py sets no __version__"
VERSION = _VERSION_LINE[1]
EXTENSION = "jupyter-agent"  # js/package.json's name: the folder under share/jupyter/labextensions
PREBUILT = ROOT / "jupyter_agent" / "labextension" / "static" / "style.js"


def _path_without_node() -> str:
    folders = [
        folder
        for folder in os.environ.get("PATH", "").split(os.pathsep)
        if folder and not any(shutil.which(tool, path=folder) for tool in ("node", "npm"))
    ]
    path = os.pathsep.join(folders)
    assert shutil.which("node", path=path) is None
    assert shutil.which("npm", path=path) is None
    return path


def _env(tmp: Path, *, bin_dir: Path | None = None) -> dict[str, str]:
    """This process's environment minus node, any active venv and Jupyter's own paths."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME") and not key.startswith("JUPYTER")
    }
    path = _path_without_node()
    env["PATH"] = f"{bin_dir}{os.pathsep}{path}" if bin_dir else path
    assert shutil.which("node", path=env["PATH"]) is None
    # the user's own Jupyter folders must not hide or disable what the venv installed
    env["JUPYTER_CONFIG_DIR"] = str(tmp / "jupyter-config")
    env["JUPYTER_DATA_DIR"] = str(tmp / "jupyter-data")
    env["PIP_NO_INPUT"] = "1"
    return env


def _run(args: list[str | Path], *, env: dict[str, str], cwd: Path) -> str:
    result = subprocess.run(
        [str(arg) for arg in args], env=env, cwd=cwd, capture_output=True, text=True
    )
    out = result.stdout + result.stderr
    assert result.returncode == 0, f"{' '.join(map(str, args))} failed:\n{out}"
    return out


def _in_venv(venv: Path, program: str, *args: str | Path, cwd: Path) -> str:
    """Run one of the venv's programs from ``cwd``, the venv first on a PATH without node."""
    return _run([venv / "bin" / program, *args], env=_env(cwd, bin_dir=venv / "bin"), cwd=cwd)


def _pip(venv: Path, *args: str | Path, cwd: Path) -> str:
    """This environment's pip, working on the venv (which has none of its own)."""
    pip = [sys.executable, "-m", "pip", "--python", venv / "bin" / "python", *args]
    return _run(pip, env=_env(cwd, bin_dir=venv / "bin"), cwd=cwd)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sdist, and the wheel built from it, with node and npm off PATH."""
    assert PREBUILT.is_file(), (
        "no built lab extension in jupyter_agent/labextension: run `make install`"
    )
    tmp = tmp_path_factory.mktemp("dist")
    build: list[str | Path] = [
        sys.executable,
        "-m",
        "build",
        "--no-isolation",
        "--outdir",
        tmp / "dist",
        ROOT,
    ]
    log = _run(build, env=_env(tmp), cwd=tmp)
    # the hook ran for the sdist and for the wheel, and both times reused the prebuilt extension
    assert log.count("Skipping build") == 2, log
    (sdist,) = (tmp / "dist").glob("*.tar.gz")
    (wheel,) = (tmp / "dist").glob("*.whl")
    return {"sdist": sdist, "wheel": wheel}


@pytest.fixture(scope="module")
def venv(built: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv (no system site-packages) with the wheel installed, and this
    environment's site-packages after its own for the dependencies."""
    tmp = tmp_path_factory.mktemp("venv")
    venv = tmp / "wheel"
    _run([sys.executable, "-m", "venv", "--without-pip", venv], env=_env(tmp), cwd=tmp)
    _pip(venv, "install", "--no-deps", "--no-compile", built["wheel"], cwd=tmp)
    # A path line: Python does not read that folder's own .pth files, so the editable
    # install of this tree stays out of the venv's sys.path.
    (site_packages,) = (venv / "lib").glob("python3*/site-packages")
    (site_packages / "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


def test_the_sdist_carries_the_prebuilt_extension_and_install_json(built):
    with tarfile.open(built["sdist"]) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    assert "install.json" in names
    assert "jupyter_agent/labextension/package.json" in names
    assert "jupyter_agent/labextension/static/style.js" in names
    assert any(
        re.fullmatch(r"jupyter_agent/labextension/static/remoteEntry\.\w+\.js", n) for n in names
    )
    assert not any(name.startswith("js/node_modules/") for name in names)
    assert "js/src/panel/widget.ts" in names
    assert "jupyter_agent/jupyter/panel/static/panel.js" in names


def test_the_wheel_carries_the_prebuilt_extension_and_install_json(built):
    share = f"{NAME.replace('-', '_')}-{VERSION}.data/data/share/jupyter/labextensions/{EXTENSION}"
    with zipfile.ZipFile(built["wheel"]) as wheel:
        names = set(wheel.namelist())
        install = json.loads(wheel.read(f"{share}/install.json"))
        metadata = wheel.read(f"{NAME.replace('-', '_')}-{VERSION}.dist-info/METADATA").decode()
        panel = wheel.read("jupyter_agent/jupyter/panel/static/panel.js")
    assert any(re.fullmatch(rf"{re.escape(share)}/static/remoteEntry\.\w+\.js", n) for n in names)
    assert f"{share}/static/style.js" in names
    assert f"{share}/package.json" in names
    assert "jupyter_agent/prompts/planner.md" in names
    # The panel is built from js/src/panel (not tracked): a build without Node.js ships the
    # bundle the last build made.
    assert (
        panel == (ROOT / "jupyter_agent" / "jupyter" / "panel" / "static" / "panel.js").read_bytes()
    )
    assert "jupyter_agent/py.typed" in names  # type checkers read the package's annotations
    assert install["packageName"] == NAME
    assert f"\nName: {NAME}\n" in metadata


def test_the_installed_package_imports_from_its_venv(venv, tmp_path):
    code = (
        "import jupyter_agent\n"
        "from jupyter_agent.agent._prompts import load_prompt\n"
        "assert load_prompt('planner')\n"
        "print(jupyter_agent.__file__)\n"
    )
    out = _in_venv(venv, "python", "-c", code, cwd=tmp_path)
    where = Path(out.strip().splitlines()[-1]).resolve()
    assert where.is_relative_to(venv.resolve()), where
    assert not where.is_relative_to(ROOT), where


def test_the_lab_extension_is_listed_prebuilt_enabled_and_ok(venv, tmp_path):
    # `jupyter labextension list`, run by the venv's python (its `jupyter` script comes
    # with jupyter_core, a dependency)
    listing = _in_venv(venv, "python", "-m", "jupyterlab.labextensions", "list", cwd=tmp_path)
    out = re.sub(r"\x1b\[[0-9;]*m", "", listing)
    # a prebuilt extension is listed, indented, under the data folder it was installed into
    _, found, after = out.partition(f"{venv}/share/jupyter/labextensions\n")
    assert found, out
    section = itertools.takewhile(lambda line: line[:1].isspace(), after.splitlines())
    listed = rf"{EXTENSION} v{re.escape(VERSION)} enabled\s+OK \(python, {re.escape(NAME)}\)"
    assert any(re.search(listed, line) for line in section), out


def test_pip_knows_the_distribution_by_its_name(venv, tmp_path):
    out = _pip(venv, "show", NAME, cwd=tmp_path)
    assert f"Name: {NAME}\n" in out
    assert f"Version: {VERSION}\n" in out


def test_the_test_environment_can_build_as_a_users_pip_would():
    # the build above runs in this environment, so it holds every build requirement
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    test_extra = set(pyproject["project"]["optional-dependencies"]["test"])
    assert set(pyproject["build-system"]["requires"]) <= test_extra
