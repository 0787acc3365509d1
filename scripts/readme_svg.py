"""Draw docs/run.svg, the README's picture of a run, so that the picture cannot go stale.

It runs the README's first command, `toolcall run "北京今天适合穿短袖吗？"`, on the offline
model with a trace, and draws that trace with `toolcall trace show --svg` (rich's export of the
live view). The offline model is deterministic; what is not (the clock) is normalised in the
trace before it is drawn: every time becomes a fixed figure, the trace is named and dated
2025-01-02 03:04:05 UTC, and the plugins' paths are left out. So the same code draws the same
bytes, and tests/test_readme.py redraws the picture and compares it with the committed file.

    python scripts/readme_svg.py            # writes docs/run.svg
    python scripts/readme_svg.py OUT.svg    # writes OUT.svg
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPOSITORY = Path(__file__).resolve().parent.parent
PICTURE = REPOSITORY / "docs" / "run.svg"
QUESTION = "北京今天适合穿短袖吗？"
TRACE_NAME = "20250102-030405-0a1b2c.jsonl"
"""A trace file name as toolcall names them; `trace show` puts it in the picture's title."""
CREATED = "2025-01-02T03:04:05.000+00:00"
MODEL_SECONDS = 0.42
"""Each model reply's latency in the picture: a small local model's pace, not the offline
model's milliseconds."""
TOOL_SECONDS = 0.01
"""Each tool call's duration in the picture."""


def fixed_times(value: Any, key: str = "") -> Any:
    """`value` with every time in it replaced by a fixed figure (a fixed clock)."""
    if isinstance(value, dict):
        return {name: fixed_times(inner, name) for name, inner in value.items()}
    if isinstance(value, list):
        return [fixed_times(inner, key) for inner in value]
    if not isinstance(value, float) or isinstance(value, bool):
        return value
    fixed = {
        "t": 0.0,
        "latency": MODEL_SECONDS,
        "duration": TOOL_SECONDS,
        "started": 0.0,
        "ended": TOOL_SECONDS,
    }
    return fixed.get(key, value)


def normalised(record: dict[str, Any], iterations: int) -> dict[str, Any]:
    """One trace record as the fixed clock would have written it."""
    record = fixed_times(record)
    if record.get("kind") == "trace_header":
        record["created"] = CREATED
        record["plugins"] = {}  # absolute paths of this checkout: not part of the picture
        for spec in record.get("tools", []):
            spec.pop("source", None)
            spec.pop("file", None)
    if record.get("kind") == "run_finished":
        record["elapsed"] = round(iterations * MODEL_SECONDS + TOOL_SECONDS, 2)
    return record


def toolcall(*args: str, cwd: Path, env: dict[str, str]) -> None:
    """Run toolcall in its own process, as a user would; a failure stops the script."""
    subprocess.run(
        [sys.executable, "-m", "toolcall_cli", *args],
        cwd=cwd,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )


def draw(picture: Path) -> None:
    """Run the question, normalise its trace, and write the picture to `picture`."""
    with tempfile.TemporaryDirectory() as scratch:
        here = Path(scratch)
        env = {
            **os.environ,
            "TZ": "UTC",  # `trace show` writes the date in local time
            "TOOLCALL_STATE_DIR": str(here / "state"),
            "XDG_CONFIG_HOME": str(here / "config"),  # no user config.toml or tools.d
            "COLUMNS": "110",
        }
        recorded = here / "recorded.jsonl"
        toolcall("run", "--trace", str(recorded), QUESTION, cwd=here, env=env)
        records = [json.loads(line) for line in recorded.read_text(encoding="utf-8").splitlines()]
        iterations = max((r.get("iteration", 0) for r in records), default=0)
        trace = here / TRACE_NAME
        trace.write_text(
            "".join(
                json.dumps(normalised(record, iterations), ensure_ascii=False) + "\n"
                for record in records
            ),
            encoding="utf-8",
        )
        picture.parent.mkdir(parents=True, exist_ok=True)
        toolcall("trace", "show", str(trace), "--svg", str(picture.resolve()), cwd=here, env=env)


def main() -> None:
    draw(Path(sys.argv[1]) if len(sys.argv) > 1 else PICTURE)


if __name__ == "__main__":
    main()
