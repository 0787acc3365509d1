"""The checks the team runs after each change run in CI too, as tests: mypy (strict, over every
path pyproject.toml names, the tests included), `ruff check` and `ruff format --check`. Nothing
ran mypy in CI before, and the tests once held four type errors nobody saw.

mypy's cache is kept in the temp directory, not in the checkout (a test run leaves the checkout
as it found it): a fresh clone's first run checks everything, some 13 s of CPU on one worker,
and a run after it reads the cache, under a second. ruff takes a fraction of a second and writes
no cache."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

ROOT = Path(__file__).resolve().parent.parent


def needs(module: str) -> None:
    """Skip, saying why, when the test extra's `module` is not installed (nothing else skips)."""
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed: pip install -e '.[test]'")


def mypy_config() -> dict[str, object]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mypy: dict[str, object] = config["tool"]["mypy"]
    return mypy


def kept_cache(fallback: Path) -> Path:
    """mypy's cache for this checkout, kept between runs in the temp directory; `fallback` (a
    fresh one) where that directory is not this user's alone, as a cache someone else can
    write could hide an error."""
    if not hasattr(os, "getuid"):
        return fallback
    tag = hashlib.sha256(f"{ROOT}:{os.getuid()}".encode()).hexdigest()[:16]
    cache = Path(tempfile.gettempdir()) / f"toolcall-mypy-{tag}"
    try:
        cache.mkdir(mode=0o700, exist_ok=True)
        held = cache.lstat()
    except OSError:
        return fallback
    private = stat.S_ISDIR(held.st_mode) and not held.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    return cache if private and held.st_uid == os.getuid() else fallback


def mypy(*args: str, cache: Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(cache), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
    )


def ruff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args, "--no-cache", "."],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def test_mypy_is_configured_strict_over_the_package_and_the_tests() -> None:
    config = mypy_config()
    assert config["strict"] is True
    files = config["files"]
    assert isinstance(files, list)
    assert {"toolcall_cli", "tests", "tools.d"} <= set(files)


def test_mypy_finds_no_type_error(tmp_path: Path) -> None:
    """Run as the team runs it: no arguments, so pyproject.toml says what and how strictly."""
    needs("mypy")
    done = mypy(cache=kept_cache(tmp_path / "mypy-cache"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("Success: no issues found"), done.stdout


def test_mypy_under_the_projects_config_refuses_an_untyped_function(tmp_path: Path) -> None:
    """The configuration the check runs under is strict: a function without annotations, which
    mypy's defaults let pass, is an error."""
    needs("mypy")
    sloppy = tmp_path / "sloppy.py"
    sloppy.write_text("def double(x):\n    return x * 2\n", encoding="utf-8")
    done = mypy(
        "--config-file",
        str(ROOT / "pyproject.toml"),
        str(sloppy),
        cache=tmp_path / "mypy-cache",
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Function is missing a type annotation" in done.stdout


def test_ruff_check_passes() -> None:
    needs("ruff")
    done = ruff("check")
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_format_leaves_every_file_as_it_is() -> None:
    needs("ruff")
    done = ruff("format", "--check")
    assert done.returncode == 0, done.stdout + done.stderr
