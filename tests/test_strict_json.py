"""Every JSON output (`toolcall parse`, `--json`, traces, `tools`, `prompt`) is strict JSON: a
reader in any language can load it. NaN and Infinity are not JSON."""

from __future__ import annotations

import io
import json
import math
import re
from pathlib import Path
from typing import Any, Literal

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


def test_a_values_json_type_is_worked_out_in_one_place() -> None:
    """The executor's errors, the schema's enum types, serve's OpenAI-worded refusals and the
    trace's and script's file errors all name a value's JSON type: each through json_type, so
    they never disagree on what True or 2.0 is."""
    from enum import Enum

    from toolcall_cli.serve._checks import openai_type
    from toolcall_cli.strictjson import json_type, json_type_in_words
    from toolcall_cli.tools.schema import schema_for_type
    from toolcall_cli.tools.validation import json_type as validation_type

    class Color(str, Enum):
        RED = "red"

    values = [None, True, 3, 2.5, "x", Color.RED, [1], (1,), {"a": 1}, {1, 2}]
    assert [json_type(v) for v in values] == [
        "null", "boolean", "integer", "number", "string", "string", "array", "array", "object",
        None,
    ]  # fmt: skip
    assert [json_type_in_words(v) for v in values[:5]] == [
        "null", "true/false", "a number", "a number", "a string",
    ]  # fmt: skip
    openai_samples: tuple[object, ...] = (True, 3, 2.5, [1], {})
    assert [openai_type(v) for v in openai_samples] == [
        "a boolean", "an integer", "a decimal", "an array", "an object",
    ]  # fmt: skip
    assert validation_type({1}) == "set" and validation_type(False) == "boolean"
    assert schema_for_type(Literal[1, True, "a"])["type"] == ["boolean", "integer", "string"]
    package = Path(__file__).resolve().parent.parent / "toolcall_cli"
    defined = [
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if "kata/solutions" not in path.as_posix()  # the katas' answers stand alone
        and re.search(r"isinstance\(value, bool\):\n\s+return \"", path.read_text("utf-8"))
    ]
    assert defined == []
