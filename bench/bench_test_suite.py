"""Wall time of the whole test suite, this tree against an older one, on the same machine.

    python bench/bench_test_suite.py OLD_TREE [--runs 2] [--one-process]

Each tree runs its own README test command (the line `pip install -e '.[test]' && COMMAND`)
with its own `.venv` (make it first: `python3 -m venv .venv && .venv/bin/pip install -e
'.[test]'`). The two take turns, so a machine that gets busier slows both alike. Both read
the same extra corpus of real outputs when TOOLCALL_CONFORMANCE_DIR names one (this tree's
own real outputs ship in the package). Writes
bench/results/test_suite_time.txt; PASS when this tree's slowest run beats the old tree's
fastest. --one-process also times this tree without pytest-xdist's workers (`-n 0`), to show
what they bring.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shlex
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
RESULTS = HERE / "bench" / "results" / "test_suite_time.txt"
INSTALL_PREFIX = "pip install -e '.[test]' && "


@dataclass(frozen=True)
class Timing:
    tree: str
    seconds: float
    summary: str
    load: str


def test_command(tree: Path, *extra: str) -> list[str]:
    """The README's test command, run with the tree's own interpreter."""
    for line in (tree / "README.md").read_text(encoding="utf-8").splitlines():
        if line.startswith(INSTALL_PREFIX):
            command = shlex.split(line.removeprefix(INSTALL_PREFIX))
            assert command[0] == "python", command
            python = str(tree / ".venv" / "bin" / "python")
            return [python, *command[1:], "-p", "no:cacheprovider", *extra]
    raise SystemExit(f"{tree}/README.md has no `{INSTALL_PREFIX}...` line")


def timed(name: str, tree: Path, env: dict[str, str], *extra: str) -> Timing:
    command = test_command(tree, *extra)
    started = time.monotonic()
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - started
    found = re.findall(r"^=*\s*(\d+ \w+.*?) in [\d.]+s", done.stdout, re.M)
    summary = found[-1] if found else f"exit {done.returncode}, no summary"
    if done.returncode != 0:
        failed = re.findall(r"^(?:FAILED|ERROR) \S+", done.stdout, re.M)
        summary += f" (exit {done.returncode}: {', '.join(failed) or done.stderr[-300:]})"
    load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    timing = Timing(name, seconds, summary, load)
    print(f"{name}: {seconds:6.1f} s  {summary}  (load before {load})", flush=True)
    return timing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old_tree", type=Path)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--one-process", action="store_true")
    args = parser.parse_args()
    old = args.old_tree.resolve()
    env = dict(os.environ)  # TOOLCALL_CONFORMANCE_DIR, when set, reaches both trees
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=old, capture_output=True, text=True
    ).stdout.strip()
    timings: list[Timing] = []
    for _ in range(args.runs):
        timings.append(timed("old", old, env))
        timings.append(timed("new", HERE, env))
        if args.one_process:
            timings.append(timed("new, one process", HERE, env, "-n", "0"))
    olds = [t.seconds for t in timings if t.tree == "old"]
    news = [t.seconds for t in timings if t.tree == "new"]
    verdict = "PASS" if max(news) < min(olds) else "FAIL"
    summary = [
        f"{name}: best {min(s):.1f} s, mean {sum(s) / len(s):.1f} s"
        for name, s in (
            (name, [t.seconds for t in timings if t.tree == name])
            for name in ("old", "new", "new, one process")
        )
        if s
    ]
    summary.append(f"new slowest {max(news):.1f} s < old fastest {min(olds):.1f} s: {verdict}")
    lines = [
        "test suite wall time, this tree against an older one, taking turns on one machine",
        f"python {platform.python_version()} on {platform.machine()}, {platform.system()}, "
        f"{os.cpu_count()} CPUs (shared with other work: load average given per run)",
        f"old: {old} at {commit}: {' '.join(test_command(old)[1:])}",
        f"new: this tree: {' '.join(test_command(HERE)[1:])}",
        "",
        *(f"{t.tree}: {t.seconds:6.1f} s  {t.summary}  (load before {t.load})" for t in timings),
        "",
        *summary,
    ]
    RESULTS.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(summary))


if __name__ == "__main__":
    main()
