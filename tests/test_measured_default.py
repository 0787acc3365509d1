"""The measured default: when nothing chose the strategy, a llama.cpp server (known by its /props
answer) gets the strategy the bench measured best for it, `schema --schema-mode json`, and the
view says so once. A strategy or schema mode chosen anywhere, or any other server, keeps the
text protocol."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_openai import Answer, FakeOpenAI, completion
from in_process import toolcall

from toolcall_cli.app.model_choice import probe_timeout

LLAMA_PROPS = {"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1}


def json_lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def first_run(
    tmp_path: Path, props: Any, reply: str, *flags: str, env: dict[str, str | None] | None = None
) -> tuple[int, list[dict[str, Any]], dict[str, Any]]:
    """One question against a fake server whose /props answers `props`; the exit code, the
    events and the body the server received."""
    with FakeOpenAI() as server:
        server.props = props
        server.answers.append(Answer(json_body=completion(reply)))
        done = toolcall(
            "run", "hi", "--base-url", server.base_url, "--model", "m", "--json", *flags,
            cwd=tmp_path, env=env,
        )  # fmt: skip
        (body,) = server.requests
    return done.returncode, json_lines(done.stdout), body


def notices(events: list[dict[str, Any]]) -> list[str]:
    return [e["message"] for e in events if e["kind"] == "notice"]


def tools_sent(events: list[dict[str, Any]]) -> list[list[str]]:
    return [[t["name"] for t in e["sent"]] for e in events if e["kind"] == "tools_chosen"]


def test_a_llama_cpp_server_gets_the_3_best_ranked_tools_and_the_view_says_why(
    tmp_path: Path,
) -> None:
    answer = json.dumps({"answer": "Hello there."})
    code, events, _ = first_run(tmp_path, LLAMA_PROPS, answer)
    assert code == 0
    (sent,) = tools_sent(events)
    # 3 of the 4 bundled tools' places: the 2 ranked best, and search_tools to find the others
    assert len(sent) == 3 and sent[-1] == "search_tools"
    (said,) = [n for n in notices(events) if "tools ranked best" in n]
    assert "(--retrieve 3)" in said and "--retrieve 0 sends every tool" in said


@pytest.mark.parametrize(
    ("flags", "env", "sent"),
    [
        (("--retrieve", "0"), None, 0),
        (("--retrieve", "2"), None, 2),
        ((), {"TOOLCALL_RETRIEVE": "0"}, 0),
    ],
)
def test_a_retrieval_chosen_anywhere_is_kept(
    tmp_path: Path, flags: tuple[str, ...], env: dict[str, str | None] | None, sent: int
) -> None:
    answer = json.dumps({"answer": "Hello there."})
    code, events, _ = first_run(tmp_path, LLAMA_PROPS, answer, *flags, env=env)
    assert code == 0
    assert [len(tools) for tools in tools_sent(events)] == ([sent] if sent else [])
    assert not [n for n in notices(events) if "tools ranked best" in n]


def test_a_llama_cpp_server_gets_json_schema_output_and_the_view_says_why(tmp_path: Path) -> None:
    answer = json.dumps({"answer": "Hello there."})
    code, events, body = first_run(tmp_path, LLAMA_PROPS, answer)
    assert code == 0
    assert body["response_format"]["type"] == "json_schema" and "tools" not in body
    started = next(e for e in events if e["kind"] == "run_started")
    assert started["strategy"] == "schema"
    (said,) = [n for n in notices(events) if "llama.cpp server: strategy" in n]
    assert "--schema-mode json" in said and "--strategy chooses another" in said
    assert events.index(started) < next(
        i for i, e in enumerate(events) if e["kind"] == "notice" and "llama.cpp" in e["message"]
    )


@pytest.mark.parametrize(
    ("flags", "env"),
    [
        (("--strategy", "regex"), None),
        (("--schema-mode", "tools"), None),
        ((), {"TOOLCALL_STRATEGY": "regex"}),
    ],
)
def test_a_strategy_chosen_anywhere_is_kept(
    tmp_path: Path, flags: tuple[str, ...], env: dict[str, str | None] | None
) -> None:
    code, events, body = first_run(tmp_path, LLAMA_PROPS, "Hello there.", *flags, env=env)
    assert code == 0
    assert "response_format" not in body
    assert not [n for n in notices(events) if "llama.cpp server" in n]


@pytest.mark.parametrize("props", [None, {"n_ctx": 4096}, ["default_generation_settings"]])
def test_another_server_keeps_the_text_protocol(tmp_path: Path, props: Any) -> None:
    code, events, body = first_run(tmp_path, props, "Hello there.")
    assert code == 0
    started = next(e for e in events if e["kind"] == "run_started")
    assert started["strategy"] == "regex" and "response_format" not in body
    assert "<tool_call>" in body["messages"][0]["content"]
    assert not [n for n in notices(events) if "llama.cpp server" in n]


@pytest.mark.parametrize(("text", "seconds"), [("", 3.0), ("12.5", 12.5)])
def test_the_probe_timeout_is_3_s_unless_the_environment_says(text: str, seconds: float) -> None:
    assert probe_timeout({"TOOLCALL_PROBE_TIMEOUT": text}) == seconds


@pytest.mark.parametrize("text", ["x", "0", "-1", "nan", "1e9"])
def test_a_probe_timeout_that_cannot_be_one_is_a_usage_error(tmp_path: Path, text: str) -> None:
    done = toolcall(
        "run", "hi", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
        cwd=tmp_path, env={"TOOLCALL_PROBE_TIMEOUT": text},
    )  # fmt: skip
    assert done.returncode == 2
    assert "$TOOLCALL_PROBE_TIMEOUT must be seconds above 0" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_llama_cpp_server_is_sent_temperature_0_unless_one_is_chosen(tmp_path: Path) -> None:
    answer = json.dumps({"answer": "Hello there."})
    code, events, body = first_run(tmp_path, LLAMA_PROPS, answer)
    assert code == 0 and body["temperature"] == 0
    (said,) = [n for n in notices(events) if "llama.cpp server: temperature" in n]
    assert "--temperature chooses another" in said
    code, events, body = first_run(tmp_path, LLAMA_PROPS, answer, "--temperature", "0.7")
    assert code == 0 and body["temperature"] == 0.7
    assert not [n for n in notices(events) if "llama.cpp server: temperature" in n]


def test_another_server_is_sent_no_temperature(tmp_path: Path) -> None:
    code, _, body = first_run(tmp_path, None, "Hello there.")
    assert code == 0 and "temperature" not in body


@pytest.mark.parametrize(
    ("flags", "measured"),
    [
        (("--profile", "llamacpp"), True),
        (("--strategy", "schema", "--schema-mode", "json"), True),
        (("--strategy", "regex"), False),
        (("--strategy", "schema"), False),
    ],
)
def test_the_measured_sampling_goes_with_the_strategy_it_was_measured_with(
    tmp_path: Path, flags: tuple[str, ...], measured: bool
) -> None:
    reply = json.dumps({"answer": "Hello there."}) if "json" in flags or measured else "Hello."
    code, events, body = first_run(tmp_path, LLAMA_PROPS, reply, *flags)
    assert code == 0
    assert ("temperature" in body) is measured
    assert bool(tools_sent(events)) is measured
