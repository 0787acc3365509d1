"""The layers of the package, kept by import-linter (pyproject.toml's contract): cli →
repl/session/render → loop → strategies | tools | models | offline → wire types, messages and
events."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(package_parent: Path, config: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(package_parent)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(config), "--no-cache"],
        capture_output=True,
        text=True,
        env=env,
        cwd=package_parent,
        timeout=120,
    )


@pytest.fixture(scope="module")
def lint_available() -> None:
    if not LINT_IMPORTS.exists():
        pytest.fail(f"{LINT_IMPORTS} is missing: install the test extra (pip install -e '.[test]')")


def test_the_layer_contract_is_kept(lint_available: None) -> None:
    done = lint_imports(ROOT, ROOT / "pyproject.toml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Layers point down only KEPT" in done.stdout


def test_an_import_that_runs_up_breaks_the_contract(lint_available: None, tmp_path: Path) -> None:
    shutil.copytree(ROOT / "toolcall_cli", tmp_path / "toolcall_cli")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    strategy_base = tmp_path / "toolcall_cli" / "strategies" / "base.py"
    # A strategy reaching up into the loop: the kind of shortcut the contract exists to stop.
    strategy_base.write_text(
        strategy_base.read_text(encoding="utf-8") + "\nimport toolcall_cli.loop  # noqa\n",
        encoding="utf-8",
    )
    done = lint_imports(tmp_path, tmp_path / "pyproject.toml")
    assert done.returncode != 0
    assert "toolcall_cli.strategies.base -> toolcall_cli.loop" in done.stdout
