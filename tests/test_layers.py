"""The layers, kept by import-linter (pyproject.toml): cli → app → the conversation and what
shows it → the loop → strategies | tools | models | offline → wire types, messages and events;
and the loop, which knows models only by the Model protocol of models.base."""

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
    assert "The loop knows models only by models.base KEPT" in done.stdout


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


def copy_with_an_import(tmp_path: Path, module: str, imported: str) -> Path:
    """The package and its contracts copied to `tmp_path`, with `module` importing `imported`."""
    shutil.copytree(ROOT / "toolcall_cli", tmp_path / "toolcall_cli")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    source = tmp_path / Path(*module.split(".")).with_suffix(".py")
    source.write_text(
        source.read_text(encoding="utf-8") + f"\nimport {imported}  # noqa\n", encoding="utf-8"
    )
    return tmp_path


def test_the_loop_importing_a_real_model_breaks_the_contract(
    lint_available: None, tmp_path: Path
) -> None:
    # Same layer as the models, so only the loop's own contract can catch it.
    copy = copy_with_an_import(tmp_path, "toolcall_cli.loop", "toolcall_cli.models.openai_compat")
    done = lint_imports(copy, copy / "pyproject.toml")
    assert done.returncode != 0
    assert "The loop knows models only by models.base BROKEN" in done.stdout
    assert "toolcall_cli.loop -> toolcall_cli.models.openai_compat" in done.stdout


@pytest.mark.parametrize(
    ("module", "imported"),
    [
        ("toolcall_cli.render.base", "toolcall_cli.approval"),  # the view asking for approval
        ("toolcall_cli.doctor._model", "toolcall_cli.kata"),  # two siblings that stay apart
        ("toolcall_cli.serve._http", "toolcall_cli.render.base"),  # the server drawing itself
    ],
)
def test_siblings_and_lower_layers_stay_apart(
    lint_available: None, tmp_path: Path, module: str, imported: str
) -> None:
    copy = copy_with_an_import(tmp_path, module, imported)
    done = lint_imports(copy, copy / "pyproject.toml")
    assert done.returncode != 0
    assert "Layers point down only BROKEN" in done.stdout
