"""Write examples/run.jsonl, the recorded trace the docs' commands read (`doctor`, `replay`,
`trace show`, `--script`), so that it is what toolcall records today.

It records `toolcall run --faults unknown_tool "北京今天适合穿短袖吗？"` on the offline model, a
run in which the model calls a tool that does not exist, reads the error and recovers, and
normalises what is not the offline model's (the clock, the date, this checkout's paths) as
scripts/readme_svg.py does, so the same code writes the same bytes; tests/test_examples.py
records it again and compares.

    python scripts/record_examples.py            # writes examples/run.jsonl
    python scripts/record_examples.py OUT.jsonl  # writes OUT.jsonl
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from readme_svg import normalised

REPOSITORY = Path(__file__).resolve().parent.parent
TRACE = REPOSITORY / "examples" / "run.jsonl"
QUESTION = "北京今天适合穿短袖吗？"
FAULTS = "unknown_tool"


def record(trace: Path) -> None:
    """Run the question with the fault, normalise its trace, and write it to `trace`."""
    with tempfile.TemporaryDirectory() as scratch:
        here = Path(scratch)
        env = {
            **os.environ,
            "TOOLCALL_STATE_DIR": str(here / "state"),
            "XDG_CONFIG_HOME": str(here / "config"),  # no user config.toml or tools.d
        }
        recorded = here / "recorded.jsonl"
        command = ("run", "--faults", FAULTS, "--trace", str(recorded), QUESTION)
        subprocess.run(
            [sys.executable, "-m", "toolcall_cli", *command],
            cwd=here,
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        records = [json.loads(line) for line in recorded.read_text(encoding="utf-8").splitlines()]
        iterations = max((r.get("iteration", 0) for r in records), default=0)
        for record_ in records:
            if "writer" in record_:  # the header's writer: this machine's process, not the model's
                record_["writer"] = {"pid": 1, "host": "example"}
        trace.write_text(
            "".join(
                json.dumps(normalised(record, iterations), ensure_ascii=False) + "\n"
                for record in records
            ),
            encoding="utf-8",
        )


def main() -> None:
    record(Path(sys.argv[1]) if len(sys.argv) > 1 else TRACE)


if __name__ == "__main__":
    main()
