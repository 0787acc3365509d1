"""The score history of the katas: one JSON line per check and per mock interview, in the state
directory (kata-scores.jsonl), so that `kata list` can show each kata's best score and time.
The file is read as untrusted: a line of the wrong shape is skipped, never a crash."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from toolcall_cli.trace.files import state_dir

SCORES_FILE = "kata-scores.jsonl"
READ_BYTES = 4 << 20
"""The most of the history read: the newest lines are what a best score needs past that."""


@dataclass(frozen=True)
class Score:
    """One kata graded: how many cases passed of how many, and in how long."""

    kata: str
    passed: int
    total: int
    seconds: float | None
    """Since the kata was started (its starter's first line, or the interview's clock)."""
    when: str
    via: str = "check"
    """"check" (`kata check`) or "interview" (`kata interview`)."""

    @property
    def rank(self) -> tuple[float, float]:
        """Higher is better: the share passed, then the shorter time."""
        share = self.passed / self.total if self.total else 0.0
        return share, -(self.seconds if self.seconds is not None else float("inf"))


def scores_path(environ: Mapping[str, str] = os.environ) -> Path:
    return state_dir(environ) / SCORES_FILE


def append_history(record: dict[str, Any], path: Path | None = None) -> None:
    """One line added to the history. Raises OSError when it cannot be written."""
    path = path or scores_path()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as history:
        history.write(json.dumps(record, ensure_ascii=False) + "\n")


def record_score(score: Score, path: Path | None = None) -> None:
    append_history({"kind": "score", **asdict(score)}, path)


def records(path: Path | None = None) -> Iterator[dict[str, Any]]:
    """Every line of the history that is a JSON object (the newest READ_BYTES of it)."""
    path = path or scores_path()
    try:
        with path.open("rb") as history:
            history.seek(max(path.stat().st_size - READ_BYTES, 0))
            data = history.read(READ_BYTES)
    except OSError:
        return
    for line in data.decode("utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict):
            yield record


def as_score(record: dict[str, Any]) -> Score | None:
    """A score line read back, or None when it is not one."""
    if record.get("kind") != "score":
        return None
    numbers = [record.get("passed"), record.get("total")]
    seconds = record.get("seconds")
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in numbers):
        return None
    if seconds is not None and not (isinstance(seconds, (int, float)) and seconds >= 0):
        return None
    if not isinstance(record.get("kata"), str) or not isinstance(record.get("when"), str):
        return None
    via = record.get("via") if record.get("via") in ("check", "interview") else "check"
    return Score(
        record["kata"],
        record["passed"],
        record["total"],
        None if seconds is None else float(seconds),
        record["when"],
        str(via),
    )


def best_scores(path: Path | None = None) -> dict[str, Score]:
    """Each kata's best score: the most passed (as a share), then the fastest."""
    best: dict[str, Score] = {}
    for record in records(path):
        score = as_score(record)
        if score is not None and (score.kata not in best or score.rank > best[score.kata].rank):
            best[score.kata] = score
    return best


def duration(seconds: float | None) -> str:
    """`12 min 5 s`, `1 h 3 min`, or `-` when unknown."""
    if seconds is None:
        return "-"
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min {secs} s" if minutes else f"{secs} s"
