"""examples/ holds what the docs' commands read; its recorded trace must be what toolcall
records today (scripts/record_examples.py records it again, and the bytes must be the same)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent


def test_the_recorded_trace_is_what_toolcall_records_today(tmp_path: Path) -> None:
    recorded = tmp_path / "run.jsonl"
    subprocess.run(
        [sys.executable, str(REPOSITORY / "scripts" / "record_examples.py"), str(recorded)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    committed = (REPOSITORY / "examples" / "run.jsonl").read_bytes()
    assert recorded.read_bytes() == committed, "run `python scripts/record_examples.py`, commit"
