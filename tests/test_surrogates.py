"""A lone surrogate (`"\\ud800"` in a model's JSON decodes to one) is never written as `?`.

No tool is given one: the call is an argument error the model can fix. Every output that holds
one writes it as the JSON escape it came as: `toolcall parse`, the view, `--json`, the trace,
and the request body that feeds the model's own reply back to it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fake_openai import Answer, FakeOpenAI, completion
from in_process import toolcall

from toolcall_cli import strictjson

LONE = "\ud800"
CALL = '<tool_call>{"name": "echo", "arguments": {"text": "a\\ud800b"}}</tool_call>'
"""A call as the model wrote it: the surrogate as a JSON escape, six characters of ASCII."""

ECHO_PLUGIN = '''
from toolcall_cli import tool

RAN = []


@tool
def echo(text: str) -> str:
    """Echo the text back."""
    RAN.append(text)
    return "echoed " + text
'''


def tools_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "tools"
    directory.mkdir()
    (directory / "echo.py").write_text(ECHO_PLUGIN, encoding="utf-8")
    return directory


def test_parse_writes_a_lone_surrogate_as_its_escape(tmp_path: Path) -> None:
    in_process = toolcall("parse", cwd=tmp_path, stdin=CALL)
    real = subprocess.run(
        [sys.executable, "-m", "toolcall_cli", "parse"],
        input=CALL.encode(),
        capture_output=True,
        timeout=60,
    )
    for returncode, out in (
        (in_process.returncode, in_process.stdout),
        (real.returncode, real.stdout.decode()),
    ):
        assert returncode == 0
        assert '"a\\ud800b"' in out and "?" not in out
        assert json.loads(out)["calls"][0]["arguments"] == {"text": f"a{LONE}b"}


def test_a_call_with_a_lone_surrogate_is_an_argument_error_and_every_output_keeps_it(
    tmp_path: Path,
) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([CALL, "done"]), encoding="utf-8")
    trace = tmp_path / "trace.jsonl"
    common = ["--model", "scripted", "--script", str(script), "--no-default-tools"]
    common += ["--tools", str(tools_dir(tmp_path))]
    shown = toolcall("run", "go", *common, "--trace", str(trace), cwd=tmp_path)
    as_json = toolcall("run", "go", "--json", *common, "--no-trace", cwd=tmp_path)
    assert (shown.returncode, as_json.returncode) == (0, 0), shown.stderr + as_json.stderr
    # The view: the escape, never a `?` in its place.
    assert 'call echo {"text": "a\\ud800b"}' in shown.stdout and "a?b" not in shown.stdout
    assert "error invalid_arguments" in shown.stdout
    # --json and the trace: strict JSON that reads back to the very string.
    for text in (as_json.stdout, trace.read_text(encoding="utf-8")):
        events = [json.loads(line) for line in text.splitlines()]
        parsed = [e for e in events if e["kind"] == "tool_call_parsed"]
        assert parsed and all(e["call"]["arguments"] == {"text": f"a{LONE}b"} for e in parsed)
        [finished] = [e for e in events if e["kind"] == "tool_finished"]
        result = finished["result"]
        assert result["ok"] is False and result["error_kind"] == "invalid_arguments"
        # What the model is told names the surrogate as it wrote it, and says what to do.
        assert "`text` holds \\ud800" in result["content"]
        assert "Send the character itself" in result["content"]
        assert "echoed" not in text  # the tool never ran


def test_the_model_s_own_lone_surrogate_goes_back_to_it_as_an_escape(tmp_path: Path) -> None:
    """A reply whose text holds one (decoded from the server's JSON) is fed back in the next
    request; encoding it failed with UnicodeEncodeError and ended the run."""
    with FakeOpenAI() as server:
        reply = f"Checking {LONE}. " + CALL.replace("a\\ud800b", "x")
        server.answers += [Answer(json_body=completion(reply)), Answer(json_body=completion("ok"))]
        done = toolcall(
            "run",
            "go",
            "--base-url",
            server.base_url,
            "--model",
            "m",
            "--no-default-tools",
            "--tools",
            str(tools_dir(tmp_path)),
            "--no-trace",
            cwd=tmp_path,
        )
        requests = server.requests
    assert done.returncode == 0, done.stderr
    assert len(requests) == 2
    assert requests[1]["messages"][2]["content"] == reply  # the same string, surrogate and all
    assert "Checking \\ud800." in done.stdout


def test_strict_json_and_the_output_streams_escape_what_they_cannot_encode() -> None:
    assert strictjson.dumps({"k": f"a{LONE}b", LONE: 1}) == '{"k": "a\\ud800b", "\\ud800": 1}'
    # An ASCII terminal (PYTHONIOENCODING=ascii) gets escapes that JSON reads back exactly.
    text = f"é天😀{LONE}"
    written = text.encode("ascii", strictjson.STREAM_ERRORS).decode("ascii")
    assert written == "\\u00e9\\u5929\\ud83d\\ude00\\ud800"
    assert json.loads(f'"{written}"') == text
