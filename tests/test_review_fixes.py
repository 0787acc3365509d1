"""Bad model and server output that still got through: an answer with nothing in it, a finish
reason that is not one, numbers too big for a float, an answer of a million objects, JSON too
broken and too large to repair, and output below Python's reach on stdout."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fake_openai import Answer, FakeOpenAI, completion
from test_cli import real_toolcall

from toolcall_cli.events import Event, FinalAnswer, ModelFailed, Notice, RunFinished
from toolcall_cli.loop import run
from toolcall_cli.models.openai_compat import Endpoint, OpenAICompatModel
from toolcall_cli.strategies import get_strategy
from toolcall_cli.strategies.text_parser import parse_text
from toolcall_cli.tools._outcome import result_text
from toolcall_cli.tools.loader import bundled_tools_dir, load_tools


def run_against(answers: list[Answer], strategy: str = "regex") -> list[Event]:
    registry = load_tools([bundled_tools_dir()]).registry
    with FakeOpenAI() as server:
        server.answers += answers
        model = OpenAICompatModel(Endpoint(base_url=server.base_url, model="fake"))
        try:
            return list(
                run(
                    "hi",
                    model=model,
                    strategy=get_strategy(strategy),
                    registry=registry,
                    history=[],
                )
            )
        finally:
            model.close()


@pytest.mark.parametrize(
    "answer",
    [
        Answer(sse=['{"id": "x"}', '{"foo": 1}', "[DONE]"]),
        Answer(sse=['{"choices": []}', "[DONE]"]),
        Answer(json_body={"choices": [{}]}),
    ],
    ids=["events-without-choices", "empty-choices", "an-empty-choice"],
)
def test_an_answer_with_nothing_in_it_is_a_model_failure_not_an_empty_answer(
    answer: Answer,
) -> None:
    events = run_against([answer])
    assert not [e for e in events if isinstance(e, FinalAnswer)]
    (failed,) = [e for e in events if isinstance(e, ModelFailed)]
    assert "held nothing" in failed.message
    assert events[-1].stop_reason == "model_failed"  # type: ignore[union-attr]


def test_an_empty_reply_is_told_so_and_the_model_tries_again() -> None:
    events = run_against([Answer(json_body=completion("")), Answer(json_body=completion("Hi!"))])
    assert [e.text for e in events if isinstance(e, FinalAnswer)] == ["Hi!"]
    assert any(isinstance(e, Notice) and "reply was empty" in e.message for e in events)
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.iterations == 2


@pytest.mark.parametrize("finish", [{"a": 1}, [[[1]]], "x" * 1000, 5])
def test_a_finish_reason_that_is_not_a_short_string_is_malformed_not_a_crash(
    finish: Any,
) -> None:
    body = completion("Hi")
    body["choices"][0]["finish_reason"] = finish
    events = run_against([Answer(json_body=body)])
    (failed,) = [e for e in events if isinstance(e, ModelFailed)]
    assert failed.error_kind == "protocol" and "finish_reason" in failed.message


def test_a_number_too_large_for_a_float_is_refused_like_infinity() -> None:
    reply = '<tool_call>{"name": "convert_units", "arguments": {"value": 1e400}}</tool_call>'
    parsed = parse_text(reply)
    assert parsed.calls == ()
    assert "too large to be a number" in parsed.errors[0].message


def test_a_tool_result_with_infinity_goes_back_as_strict_json() -> None:
    text = result_text({"result": float("inf"), "n": 1})
    value = json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in a result"))
    assert value["result"] == "Infinity" and value["n"] == 1
    assert "Infinity is not JSON" in value["json_notes"][0]


def test_an_answer_of_a_million_objects_is_refused_before_it_is_built() -> None:
    body = b'{"choices": [], "x": [' + b",".join([b"{}"] * 1_000_000) + b"]}"
    events = run_against([Answer(raw=body, headers={"Content-Type": "application/json"})])
    (failed,) = [e for e in events if isinstance(e, ModelFailed)]
    assert failed.error_kind == "too_large" and "100,000 objects" in failed.message


def test_json_too_broken_and_too_large_to_repair_is_refused_at_once() -> None:
    pairs = ", ".join(["a: b"] * 8000)  # json-repair takes minutes over this
    reply = '<tool_call>{"name": "calculate", "arguments": {' + pairs + "}}</tool_call>"
    started = time.perf_counter()
    parsed = parse_text(reply)
    assert "too large to repair" in parsed.errors[0].message
    assert time.perf_counter() - started < 5  # a wide bound: the point is not minutes


@pytest.mark.parametrize(
    "reply",
    [
        '<tool_call>{"name": "get_weather"}, "arguments": {"city": "Paris"}}</tool_call>',
        'Sure <tool_call>{"name": "get_weather"}, "arguments": {"city": "Paris"}}',
    ],
    ids=["closed", "unclosed"],
)
def test_a_call_whose_bracket_closed_too_early_is_not_run_without_its_arguments(
    reply: str,
) -> None:
    parsed = parse_text(reply)
    assert parsed.calls == ()  # never get_weather({}) with the arguments shown as text
    assert "was not run" in parsed.errors[0].message
    assert "arguments" not in parsed.text


def test_an_incomplete_second_call_in_closed_tags_is_not_called_cut_off() -> None:
    reply = (
        '<tool_call>{"name": "a", "arguments": {}}\n{"name": "g", "arguments": {"b": 2}</tool_call>'
    )
    parsed = parse_text(reply)
    assert [(c.name, c.arguments) for c in parsed.calls] == [("a", {}), ("g", {"b": 2})]
    assert parsed.errors == ()


NOISY = '''
import os
import subprocess
import sys
import threading
from toolcall_cli import tool

@tool
def noisy() -> str:
    """Makes noise below Python's print."""
    t = threading.Thread(target=lambda: print("FROM-A-THREAD"))
    t.start()
    t.join()
    os.write(1, b"FROM-OS-WRITE\\n")
    subprocess.run([sys.executable, "-c", "print('FROM-A-SUBPROCESS')"], check=True)
    return "done"
'''


@pytest.mark.parametrize("mode", ["--json", "--quiet"])
def test_output_below_python_never_reaches_stdout(tmp_path: Path, mode: str) -> None:
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / "noisy.py").write_text(NOISY, encoding="utf-8")
    script = tmp_path / "script.jsonl"
    lines = ['<tool_call>{"name": "noisy", "arguments": {}}</tool_call>', "All quiet."]
    script.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    done = real_toolcall(
        "run", "go", mode, "--model", "scripted", "--script", str(script), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    for noise in ("FROM-A-THREAD", "FROM-OS-WRITE", "FROM-A-SUBPROCESS"):
        assert noise not in done.stdout
        assert noise in done.stderr  # not lost: it went where diagnostics go
    if mode == "--json":
        assert all(json.loads(line) for line in done.stdout.splitlines())
    else:
        assert done.stdout == "All quiet.\n"


def test_the_real_stdout_is_back_after_the_run() -> None:
    # Within one process: a run in --json mode, then a plain print to fd 1 must reach stdout.
    code = (
        "import os, sys\n"
        "from toolcall_cli.cli._running import renderer_stdout\n"
        "with renderer_stdout('json') as out:\n"
        "    out.write('RENDERED\\n')\n"
        "    os.write(1, b'DIVERTED\\n')\n"
        "os.write(1, b'AFTER\\n')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout == "RENDERED\nAFTER\n"
    assert done.stderr == "DIVERTED\n"
