"""ARCHITECTURE.md stays true: short, every module it names exists, every `Run` step it names is a
method of the loop's Run, and its drawing of the layers is the contract lint-imports enforces."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from toolcall_cli.loop import Run

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "ARCHITECTURE.md"
PACKAGE = ROOT / "toolcall_cli"


def page() -> str:
    return PAGE.read_text(encoding="utf-8")


def named_paths(text: str) -> list[str]:
    """Every backticked module or folder path: `loop.py`, `models/base.py`, `offline/`."""
    return re.findall(r"`([\w./]+(?:\.py|/))`", text)


def drawn_layers(text: str) -> list[str]:
    drawing = re.search(r"```text\n(.*?)```", text, re.S)
    assert drawing, "ARCHITECTURE.md has no ```text drawing of the layers"
    return [line.strip() for line in drawing.group(1).splitlines() if line.strip()]


def contract_layers() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    for contract in config["tool"]["importlinter"]["contracts"]:
        if contract["type"] == "layers":
            return [" ".join(layer.split()) for layer in contract["layers"]]
    raise AssertionError("pyproject.toml has no layers contract")


def test_the_page_is_short() -> None:
    assert len(page().splitlines()) <= 150


def test_every_module_it_names_exists() -> None:
    paths = named_paths(page())
    assert len(paths) >= 30, paths  # the walk-through names the modules it passes through
    missing = [
        path for path in paths if not (PACKAGE / path).exists() and not (ROOT / path).exists()
    ]
    assert missing == []


def test_every_step_of_the_run_it_names_is_a_method() -> None:
    steps = set(re.findall(r"`Run\.(\w+)`", page()))
    assert {"build_request", "read_reply", "run_round", "feed_back"} <= steps
    assert sorted(step for step in steps if not callable(getattr(Run, step, None))) == []


def test_the_drawing_is_the_enforced_contract() -> None:
    assert drawn_layers(page()) == contract_layers()


def test_a_stale_name_would_be_caught() -> None:
    stale = page().replace("`loop.py`", "`engine_loop.py`")
    assert "engine_loop.py" in named_paths(stale)
    assert not (PACKAGE / "engine_loop.py").exists()


def test_the_offline_model_stays_small() -> None:
    """The demo model is a small test partner, not a second engine: at most 1,500 lines, so a
    reader sees that it knows only the request body (a docstring once pushed it to 1,502)."""
    lines = sum(
        len(p.read_text(encoding="utf-8").splitlines()) for p in PACKAGE.glob("offline/*.py")
    )
    assert 1000 < lines <= 1500, lines


MOST_COMPLEX = 15
"""The highest cyclomatic complexity a function of the package may have (radon's count): a
function past it has more paths than a reader keeps in mind, and is split."""


def too_complex(source: str) -> list[str]:
    """The functions and methods of `source` above MOST_COMPLEX, each with its complexity."""
    from radon.complexity import cc_visit  # type: ignore[import-untyped]

    return [f"{b.fullname} {b.complexity}" for b in cc_visit(source) if b.complexity > MOST_COMPLEX]


def test_no_function_of_the_package_is_too_complex() -> None:
    """Two slipped past once unseen (a timeline's width, a round's progress, at 16 each): the
    limit held only while someone ran radon by hand."""
    found = [
        f"{path.relative_to(PACKAGE)}: {function}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for function in too_complex(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_a_function_too_complex_would_be_caught() -> None:
    branches = "".join(f"    if x == {n}:\n        return {n}\n" for n in range(MOST_COMPLEX))
    assert too_complex(f"def f(x):\n{branches}    return -1\n") == ["f 16"]
