"""--schema-mode required: every request requires a call (`tool_choice: "required"`) and offers a
final_answer tool; a call to it is the run's answer, never a tool run. Tested against a real
HTTP server on 127.0.0.1 replaying native replies, and with the offline model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_openai import Answer, FakeOpenAI, completion
from in_process import Finished, toolcall

from toolcall_cli.events import IterationStarted, RunFinished
from toolcall_cli.offline import OfflineModel
from toolcall_cli.session import Session
from toolcall_cli.strategies import get_strategy
from toolcall_cli.tools.loader import bundled_tools_dir, load_tools

REQUIRED = ("-s", "schema", "--schema-mode", "required")


def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    encoded = json.dumps(arguments, ensure_ascii=False)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": encoded}}


def calls(*entries: dict[str, Any]) -> Answer:
    return Answer(json_body=completion(None, list(entries), finish_reason="tool_calls"))


def against_server(
    tmp_path: Path, answers: list[Answer], *flags: str
) -> tuple[Finished, list[dict[str, Any]], list[dict[str, Any]]]:
    """The run's exit, its --json events, and the request bodies the server received."""
    with FakeOpenAI() as server:
        server.answers += answers
        done = toolcall(
            "run", "What's 12*5+3?", "--base-url", server.base_url, "--model", "m", "--json",
            *REQUIRED, *flags, cwd=tmp_path,
        )  # fmt: skip
        requests = list(server.requests)
    events = [json.loads(line) for line in done.stdout.splitlines()]
    return done, events, requests


def kinds(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["kind"] == kind]


def test_the_request_requires_a_call_and_offers_final_answer(tmp_path: Path) -> None:
    done = toolcall("prompt", "hi", *REQUIRED, cwd=tmp_path)
    body = json.loads(done.stdout)
    assert body["tool_choice"] == "required"
    functions = {t["function"]["name"]: t["function"] for t in body["tools"]}
    assert {"calculate", "get_weather", "final_answer"} <= set(functions)
    answer = functions["final_answer"]["parameters"]
    assert answer["required"] == ["answer"] and answer["properties"]["answer"]["type"] == "string"
    plain = json.loads(toolcall("prompt", "hi", "-s", "schema", cwd=tmp_path).stdout)
    assert plain["tool_choice"] == "auto" and "final_answer" not in json.dumps(plain["tools"])


def test_a_call_to_final_answer_ends_the_run_with_its_answer(tmp_path: Path) -> None:
    answers = [
        calls(call("c1", "calculate", {"expression": "12*5+3"})),
        calls(call("c2", "final_answer", {"answer": "12*5+3 is 63."})),
    ]
    done, events, requests = against_server(tmp_path, answers)
    assert done.returncode == 0, done.stderr
    (final,) = kinds(events, "final_answer")
    assert final["text"] == "12*5+3 is 63."
    started = [e["call"]["name"] for e in kinds(events, "tool_started")]
    assert started == ["calculate"]  # final_answer is never run as a tool
    assert all(r["tool_choice"] == "required" for r in requests)


def test_final_answer_beside_other_calls_is_refused_until_their_results_are_read(
    tmp_path: Path,
) -> None:
    answers = [
        calls(
            call("c1", "calculate", {"expression": "12*5+3"}),
            call("c2", "final_answer", {"answer": "It is 60."}),  # written before the result
        ),
        calls(call("c3", "final_answer", {"answer": "63"})),
    ]
    done, events, requests = against_server(tmp_path, answers)
    assert done.returncode == 0, done.stderr
    assert [e["text"] for e in kinds(events, "final_answer")] == ["63"]
    (refusal,) = kinds(events, "parse_error")
    assert refusal["call_id"] == "c2" and "not taken" in refusal["message"]
    # Every call id of the first reply is answered in the second request, c2 with the refusal.
    fed = {m["tool_call_id"]: m["content"] for m in requests[1]["messages"] if m["role"] == "tool"}
    assert set(fed) == {"c1", "c2"} and "63" in fed["c1"] and "not taken" in fed["c2"]


@pytest.mark.parametrize(
    ("arguments", "taken"),
    [({"text": "63"}, None), ({"answer": ["63"]}, None), ({"answer": 63}, "63")],
)
def test_final_answer_needs_its_answer_as_text(
    tmp_path: Path, arguments: dict[str, Any], taken: str | None
) -> None:
    answers = [calls(call("c1", "final_answer", arguments))]
    if taken is None:
        answers.append(calls(call("c2", "final_answer", {"answer": "Sixty-three."})))
    done, events, _ = against_server(tmp_path, answers)
    assert done.returncode == 0, done.stderr
    assert [e["text"] for e in kinds(events, "final_answer")] == [taken or "Sixty-three."]
    assert len(kinds(events, "parse_error")) == (0 if taken else 1)


def test_an_empty_final_answer_is_not_an_answer(tmp_path: Path) -> None:
    answers = [
        calls(call("c1", "final_answer", {"answer": "  "})),
        calls(call("c2", "final_answer", {"answer": "63"})),
    ]
    done, events, _ = against_server(tmp_path, answers)
    assert done.returncode == 0, done.stderr
    assert [e["text"] for e in kinds(events, "final_answer")] == ["63"]


def test_a_call_written_inside_final_answer_is_never_run(tmp_path: Path) -> None:
    """final_answer is never run as a tool, so its text must not become a call either: else a
    model reaches any tool (past approval prompts the user did not expect) through it."""
    smuggled = json.dumps({"name": "calculate", "arguments": {"expression": "6*7"}})
    answers = [
        calls(call("c1", "final_answer", {"answer": smuggled})),
        calls(call("c2", "final_answer", {"answer": "63"})),
    ]
    done, events, _ = against_server(tmp_path, answers)
    assert done.returncode == 0, done.stderr
    assert not kinds(events, "tool_started")
    assert [e["text"] for e in kinds(events, "final_answer")] == ["63"]


def test_the_last_request_at_the_limit_sends_no_tools_and_no_tool_choice(tmp_path: Path) -> None:
    answers = [
        calls(call("c1", "calculate", {"expression": "12*5+3"})),
        Answer(json_body=completion("It is 63.")),
    ]
    done, events, requests = against_server(tmp_path, answers, "--max-iterations", "1")
    assert done.returncode == 3, done.stderr
    assert "tools" not in requests[1] and "tool_choice" not in requests[1]
    (final,) = kinds(events, "final_answer")
    assert final["text"] == "It is 63." and final["best_effort"]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What's 12*5+3?", "12*5+3 = 63"),
        ("北京和上海明天天气分别是多少？", "上海明天：阵雨，13°C"),
        ("北京今天适合穿短袖吗？", "不太适合穿短袖"),
        ("What's the weather in Paris?", "Paris today"),
    ],
)
def test_the_offline_model_answers_through_final_answer(
    tmp_path: Path, question: str, expected: str
) -> None:
    done = toolcall("run", question, "--json", *REQUIRED, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    (final,) = kinds(events, "final_answer")
    assert expected in final["text"]
    last = kinds(events, "model_replied")[-1]
    assert '"name": "final_answer"' in last["raw"]  # answered by the tool, not plain text
    assert "final_answer" not in [e["call"]["name"] for e in kinds(events, "tool_started")]


def test_a_chat_after_a_final_answer_leaves_no_call_unanswered() -> None:
    """The next question's request must not carry the final_answer call without a tool
    message for it: a server refuses such a history."""
    session = Session(
        model=OfflineModel(),
        strategy=get_strategy("schema", schema_mode="required"),
        registry=load_tools([bundled_tools_dir()]).registry,
    )
    first = list(session.ask("What's 12*5+3?"))
    second = list(session.ask("北京今天天气怎么样？"))
    assert [e.stop_reason for e in first + second if isinstance(e, RunFinished)] == ["answered"] * 2
    request = next(e for e in second if isinstance(e, IterationStarted)).request
    asked = {c["id"] for m in request["messages"] for c in m.get("tool_calls") or []}
    answered = {m["tool_call_id"] for m in request["messages"] if m["role"] == "tool"}
    assert asked == answered and asked
