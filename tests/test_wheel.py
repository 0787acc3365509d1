"""The wheel, as `pip install .` makes it: built offline from this checkout, installed into a
fresh venv, it carries the top-level tools.d/ and lists the bundled tools from its own copy."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from toolcall_cli.eject import PROGRAMS

REPO = Path(__file__).resolve().parent.parent
FILES = {
    "get_weather": "weather.py",
    "calculate": "calculator.py",
    "get_time": "clock.py",
    "convert_units": "units.py",
}
BUILD_INPUTS = ("pyproject.toml", "setup.py", "README.md", "toolcall_cli", "tools.d")
"""What the build reads. It runs on a copy: pip builds in the source tree, and a build/ left
there from an earlier build could carry a removed module into the wheel unseen."""
NOT_SOURCE = shutil.ignore_patterns("__pycache__", "*.pyc")
OFFLINE = ("--no-index", "--no-input", "--disable-pip-version-check", "--no-cache-dir")


@dataclass(frozen=True)
class Installed:
    wheel: Path
    toolcall: Path
    site_packages: Path

    @property
    def bundled(self) -> Path:
        return self.site_packages / "toolcall_cli" / "_bundled_tools"


def run(
    command: Sequence[str | Path], *, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The wheel built with no build isolation (so nothing is downloaded) and installed with
    --no-deps --no-index into a fresh venv, which borrows this environment's dependencies."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"
    source.mkdir()
    for name in BUILD_INPUTS:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, source / name, ignore=NOT_SOURCE)
        else:
            shutil.copy2(REPO / name, source / name)
    pip = [sys.executable, "-m", "pip"]
    run([*pip, "wheel", *OFFLINE, "--no-deps", "--no-build-isolation", "-w", root / "dist", source])
    [wheel] = (root / "dist").glob("toolcall-*.whl")
    venv = root / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", venv])
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    run([*pip, "--python", python, "install", *OFFLINE, "--no-deps", wheel])
    asked = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site_packages = Path(run([python, "-c", asked]).stdout.strip())
    # A path line in a .pth file only extends sys.path, after the venv's own site-packages, so
    # the wheel's toolcall_cli wins and this environment's editable-install hook never runs.
    ours = dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib"))
    (site_packages / "toolcall_test_dependencies.pth").write_text("\n".join(ours) + "\n")
    toolcall = python.parent / ("toolcall.exe" if os.name == "nt" else "toolcall")
    return Installed(wheel=wheel, toolcall=toolcall, site_packages=site_packages)


def listed(installed: Installed, *flags: str, cwd: Path) -> list[tuple[str, str]]:
    """`toolcall tools`, piped, by the installed console script: (name, source) per tool. The
    script, not `python -m`, so that running from the repo root cannot import the repo's copy."""
    done = run([installed.toolcall, "tools", *flags], cwd=cwd)
    assert done.stderr == ""  # no warning: nothing failed to load, nothing loaded twice
    rows = [line for line in done.stdout.splitlines() if line != "No tools are loaded."]
    return sorted((row.split("(", 1)[0], row.rsplit("  ", 1)[1]) for row in rows)


def from_dir(directory: Path) -> list[tuple[str, str]]:
    return sorted((name, str(directory / file)) for name, file in FILES.items())


def wheel_file(wheel: Path, name: str) -> bytes:
    with zipfile.ZipFile(wheel) as opened:
        return opened.read(name)


def test_the_wheel_carries_the_top_level_tools_d_and_every_module(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = set(wheel.namelist())
        for file in FILES.values():
            copy = wheel.read(f"toolcall_cli/_bundled_tools/{file}")
            assert copy == (REPO / "tools.d" / file).read_bytes()
    assert not [name for name in names if "tools.d" in name]
    # The katas grade with toolcall's own real outputs: data of the package, with their notes.
    for data in ("real_outputs.jsonl", "README.md"):
        own = REPO / "toolcall_cli" / "data" / data
        assert wheel_file(installed.wheel, f"toolcall_cli/data/{data}") == own.read_bytes()
    modules = {path.relative_to(REPO).as_posix() for path in (REPO / "toolcall_cli").rglob("*.py")}
    assert modules - names == set(), "a module of the source tree is missing from the wheel"


def test_the_installed_wheel_lists_the_bundled_tools_from_its_own_copy(
    installed: Installed, tmp_path: Path
) -> None:
    assert listed(installed, cwd=tmp_path) == from_dir(installed.bundled)
    assert listed(installed, "--no-default-tools", cwd=tmp_path) == []
    # On a terminal the table names them briefly, not by their path in site-packages.
    table = run(
        [installed.toolcall, "tools"],
        cwd=tmp_path,
        env={**os.environ, "FORCE_COLOR": "1", "NO_COLOR": "1", "COLUMNS": "200"},
    ).stdout
    assert [f"bundled: {file}" in table for file in FILES.values()] == [True] * len(FILES)
    assert "site-packages" not in table


def test_the_installed_wheel_run_from_the_repo_root_loads_them_once(
    installed: Installed,
) -> None:
    # ./tools.d is the repo's copy of the same files: the same plugins, so no second load and
    # no "name already used" warnings.
    assert listed(installed, cwd=REPO) == from_dir(installed.bundled)
    # Without the bundled tools the repo's tools.d is a working dir's tools.d like any other.
    assert listed(installed, "--no-default-tools", cwd=REPO) == from_dir(REPO / "tools.d")


def test_the_installed_wheel_ejects_the_programs_it_carries(
    installed: Installed, tmp_path: Path
) -> None:
    # The programs are files of the package (toolcall_cli/eject), read from the installed copy.
    for strategy, file in PROGRAMS.items():
        done = run([installed.toolcall, "eject", "--strategy", strategy], cwd=tmp_path)
        assert done.stdout == (REPO / "toolcall_cli" / "eject" / file).read_text(encoding="utf-8")
        assert (installed.site_packages / "toolcall_cli" / "eject" / file).is_file()
