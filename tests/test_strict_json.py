"""Every JSON output (`toolcall parse`, `--json`, traces, `tools`, `prompt`) is strict JSON: a
reader in any language can load it. NaN and Infinity are not JSON."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

from in_process import toolcall

from toolcall_cli.events import ToolCallParsed
from toolcall_cli.messages import ToolCall
from toolcall_cli.render._jsonl import JsonLinesRenderer
from toolcall_cli.strictjson import NOTES_KEY
from toolcall_cli.trace import TraceWriter, read_trace


def strict_loads(text: str) -> Any:
    def refuse(name: str) -> None:
        raise AssertionError(f"{name} in output that must be strict JSON")

    return json.loads(text, parse_constant=refuse)


def test_parse_refuses_nan_from_a_model_and_prints_strict_json(tmp_path: Path) -> None:
    reply = '<tool_call>{"name": "f", "arguments": {"x": NaN, "y": -Infinity}}</tool_call>'
    done = toolcall("parse", cwd=tmp_path, stdin=reply)
    assert done.returncode == 0, done.stderr
    result = strict_loads(done.stdout)
    assert result["calls"] == []
    assert "NaN (which JSON does not have)" in result["errors"][0]["message"]


def test_a_nan_that_reaches_an_event_is_written_as_a_string_with_a_note(tmp_path: Path) -> None:
    call = ToolCall(id="c1", name="f", arguments={"x": math.nan, "y": [math.inf]})
    event = ToolCallParsed(call=call)
    out = io.StringIO()
    JsonLinesRenderer(out).handle(event)
    line = strict_loads(out.getvalue())
    assert line["call"]["arguments"] == {"x": "NaN", "y": ["Infinity"]}
    assert line[NOTES_KEY] == [
        "call.arguments.x: NaN is not JSON; written as the string 'NaN'",
        "call.arguments.y[0]: Infinity is not JSON; written as the string 'Infinity'",
    ]
    trace = tmp_path / "t.jsonl"
    writer = TraceWriter.open(trace)
    writer.write(event)
    writer.close()
    strict_loads(trace.read_text(encoding="utf-8"))
    assert read_trace(trace).records[0]["call"]["arguments"]["x"] == "NaN"


PLUGIN = '''
from toolcall_cli import tool

@tool
def limit(x: float = float("inf"), y: float = float("nan")) -> float:
    """Clamp nothing.

    Args:
        x: The upper bound.
        y: Unused.
    """
    return min(x, 1.0)
'''


def test_a_tool_default_that_json_cannot_hold_is_left_out_of_its_schema(tmp_path: Path) -> None:
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / "limit.py").write_text(PLUGIN, encoding="utf-8")
    shown = toolcall("tools", "limit", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    schema = strict_loads(shown.stdout)
    assert schema["parameters"]["properties"]["x"] == {
        "type": "number",
        "description": "The upper bound.",
    }
    prompt = toolcall("prompt", "hi", cwd=tmp_path)
    strict_loads(prompt.stdout)
    script = tmp_path / "script.jsonl"
    script.write_text(
        json.dumps('<tool_call>{"name": "limit", "arguments": {}}</tool_call>')
        + "\n"
        + json.dumps("done")
        + "\n",
        encoding="utf-8",
    )
    run = toolcall(
        "run", "go", "--json", "--model", "scripted", "--script", str(script), cwd=tmp_path
    )
    assert run.returncode == 0, run.stderr
    lines = [strict_loads(line) for line in run.stdout.splitlines()]
    assert lines[-1]["kind"] == "run_finished"
