"""The defaults for a small model. A llama.cpp server (known by its /props answer) gets, when
nothing chose the strategy, the one the bench measured best for it, `schema --schema-mode json`;
and under whichever strategy runs, temperature 0, a max_tokens sized to the context window, and
retrieval of the tools that fit the question from 10 tools up, each where the user chose
nothing (flag, environment or config). The view says what was applied. Any other server gets
none of it."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from fake_openai import Answer, FakeOpenAI, completion, text_stream
from in_process import toolcall
from piped_chat import piped_chat
from prompt_toolkit.input import create_pipe_input
from rich.console import Console

import toolcall_cli
from toolcall_cli.app._measured import MAX_REPLY_TOKENS, default_max_tokens
from toolcall_cli.app._model_choice import probe_timeout
from toolcall_cli.app.build import Assembled, build_session, first_request
from toolcall_cli.app.options import SessionOptions
from toolcall_cli.render import make_renderer
from toolcall_cli.wire import ContextWindow

LLAMA_PROPS = {"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1}
JSON_ANSWER = json.dumps({"answer": "Hello there."})
SMALL_MODEL = "defaults for a small model (a llama.cpp server)"


def json_lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def reply_for(flags: tuple[str, ...]) -> Answer:
    """An answer the strategy the flags choose reads as a final answer (none chosen: the
    measured one, JSON-schema output)."""
    if "stream" in flags:
        return Answer(sse=text_stream("Hello there."))
    if "regex" in flags or "tools" in flags or ("schema" in flags and "json" not in flags):
        return Answer(json_body=completion("Hello there."))
    return Answer(json_body=completion(JSON_ANSWER))


def first_run(
    tmp_path: Path,
    props: Any,
    *flags: str,
    env: dict[str, str | None] | None = None,
    reply: Answer | None = None,
) -> tuple[int, list[dict[str, Any]], dict[str, Any]]:
    """One question against a fake server whose /props answers `props`; the exit code, the
    events and the body the server received."""
    with FakeOpenAI() as server:
        server.props = props
        server.answers.append(reply or reply_for(flags))
        done = toolcall(
            "run", "hi", "--base-url", server.base_url, "--model", "m", "--json", *flags,
            cwd=tmp_path, env=env,
        )  # fmt: skip
        (body,) = server.requests
    assert done.returncode == 0, done.stderr
    return done.returncode, json_lines(done.stdout), body


def notices(events: list[dict[str, Any]]) -> list[str]:
    return [e["message"] for e in events if e["kind"] == "notice"]


def said(events: list[dict[str, Any]], words: str) -> list[str]:
    return [n for n in notices(events) if words in n]


def tools_sent(events: list[dict[str, Any]]) -> list[list[str]]:
    return [[t["name"] for t in e["sent"]] for e in events if e["kind"] == "tools_chosen"]


def more_tools(tmp_path: Path, count: int) -> Path:
    """A tools.d directory with `count` more tools, beside the 4 bundled ones."""
    folder = tmp_path / f"tools{count}"
    folder.mkdir()
    source = ["from toolcall_cli import tool", ""]
    for n in range(count):
        source += [
            "",
            "@tool",
            f"def lookup_{n}(word: str) -> str:",
            f'    """Look a word up in dictionary number {n}."""',
            "    return word",
            "",
        ]
    (folder / "lookups.py").write_text("\n".join(source), encoding="utf-8")
    return folder


# --- the strategy -------------------------------------------------------------------------------


def test_a_llama_cpp_server_gets_json_schema_output_and_the_view_says_why(tmp_path: Path) -> None:
    _, events, body = first_run(tmp_path, LLAMA_PROPS)
    assert body["response_format"]["type"] == "json_schema" and "tools" not in body
    started = next(e for e in events if e["kind"] == "run_started")
    assert started["strategy"] == "schema"
    (line,) = said(events, "llama.cpp server: strategy")
    assert "--schema-mode json" in line and "--strategy chooses another" in line
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
    reply = Answer(json_body=completion("Hello there."))
    _, events, body = first_run(tmp_path, LLAMA_PROPS, *flags, env=env, reply=reply)
    assert "response_format" not in body
    assert not said(events, "llama.cpp server: strategy")


@pytest.mark.parametrize("props", [None, {"n_ctx": 4096}, ["default_generation_settings"]])
def test_another_server_keeps_the_text_protocol_and_its_own_sampling(
    tmp_path: Path, props: Any
) -> None:
    _, events, body = first_run(tmp_path, props, reply=Answer(json_body=completion("Hi.")))
    started = next(e for e in events if e["kind"] == "run_started")
    assert started["strategy"] == "regex" and "response_format" not in body
    assert "<tool_call>" in body["messages"][0]["content"]
    assert "temperature" not in body and "max_tokens" not in body
    assert not said(events, "llama.cpp server") and not said(events, SMALL_MODEL)


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


# --- temperature and max_tokens, under every strategy -----------------------------------------

EVERY_STRATEGY = [
    (),
    ("--strategy", "regex"),
    ("--strategy", "schema"),
    ("--strategy", "schema", "--schema-mode", "json"),
    ("--strategy", "schema", "--schema-mode", "required"),
    ("--strategy", "stream"),
    ("--strategy", "stream", "--stream-mode", "native"),
    ("--profile", "llamacpp"),
]


@pytest.mark.parametrize("flags", EVERY_STRATEGY, ids=" ".join)
def test_every_strategy_is_sent_temperature_0_and_a_quarter_of_the_window(
    tmp_path: Path, flags: tuple[str, ...]
) -> None:
    if "--profile" in flags:  # the profile's own URL is not this server's
        flags = ("--strategy", "schema", "--schema-mode", "json")
    reply = reply_for(flags)
    if "required" in flags:
        reply = Answer(json_body=completion(None, [answer_call()]))
    _, events, body = first_run(tmp_path, LLAMA_PROPS, *flags, reply=reply)
    assert body["temperature"] == 0 and body["max_tokens"] == 1024
    (line,) = said(events, SMALL_MODEL)
    assert line == (
        f"{SMALL_MODEL}: temperature 0 (the server's own is 0.8), max_tokens 1024 (a quarter "
        "of the 4,096-token window); --temperature and --max-tokens choose others"
    )
    started = next(e for e in events if e["kind"] == "run_started")
    assert started["sampling"]["temperature"] == 0 and started["sampling"]["max_tokens"] == 1024


def answer_call() -> dict[str, Any]:
    """The call --schema-mode required answers with (tool_choice "required" forces one)."""
    return {
        "id": "call_1",
        "type": "function",
        "function": {"name": "final_answer", "arguments": json.dumps({"answer": "Hello there."})},
    }


@pytest.mark.parametrize(
    ("flags", "env", "temperature", "max_tokens", "line"),
    [
        (("--temperature", "0.7"), None, 0.7, 1024, "max_tokens 1024"),
        (("--max-tokens", "300"), None, 0, 300, "temperature 0"),
        ((), {"TOOLCALL_MAX_TOKENS": "200", "TOOLCALL_TEMPERATURE": "0.3"}, 0.3, 200, None),
        (("--temperature", "1", "--max-tokens", "64"), None, 1, 64, None),
    ],
)
def test_a_temperature_or_max_tokens_chosen_wins(
    tmp_path: Path,
    flags: tuple[str, ...],
    env: dict[str, str | None] | None,
    temperature: float,
    max_tokens: int,
    line: str | None,
) -> None:
    flags = ("--strategy", "regex", *flags)
    _, events, body = first_run(tmp_path, LLAMA_PROPS, *flags, env=env)
    assert body["temperature"] == temperature and body["max_tokens"] == max_tokens
    lines = said(events, SMALL_MODEL)
    if line is None:
        assert lines == []
    else:
        (one,) = lines
        assert line in one
        for setting in ("temperature", "max_tokens"):
            assert (setting in one) is (setting in line)
        assert one.endswith("chooses another")


def test_a_profile_s_sampling_wins(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        server.props = LLAMA_PROPS
        server.answers.append(Answer(json_body=completion("Hello there.")))
        config = tmp_path / "config.toml"
        config.write_text(
            f'[profiles.mine]\nbase_url = "{server.base_url}"\nmodel = "m"\n'
            'strategy = "regex"\ntemperature = 0.2\nmax_tokens = 99\n',
            encoding="utf-8",
        )
        done = toolcall(
            "run", "hi", "--profile", "mine", "--json",
            cwd=tmp_path, env={"TOOLCALL_CONFIG": str(config)},
        )  # fmt: skip
        (body,) = server.requests
    assert done.returncode == 0, done.stderr
    assert body["temperature"] == 0.2 and body["max_tokens"] == 99
    assert not said(json_lines(done.stdout), SMALL_MODEL)


@pytest.mark.parametrize(
    ("props", "flags", "max_tokens", "why"),
    [
        (
            {"default_generation_settings": {"n_ctx": 32768}},
            (),
            2048,
            "a quarter of the 32,768-token window, at most 2,048",
        ),
        (LLAMA_PROPS, ("--context-window", "2000"), 500, "a quarter of the 2,000-token window"),
        ({"total_slots": 1}, (), 1024, "the context window is unknown"),
    ],
)
def test_max_tokens_is_sized_to_the_window_and_said_so(
    tmp_path: Path, props: Any, flags: tuple[str, ...], max_tokens: int, why: str
) -> None:
    _, events, body = first_run(tmp_path, props, "--strategy", "regex", *flags)
    assert body["max_tokens"] == max_tokens
    (line,) = said(events, SMALL_MODEL)
    assert f"max_tokens {max_tokens} ({why})" in line


def test_the_default_max_tokens_is_a_quarter_of_the_window_up_to_its_cap() -> None:
    assert default_max_tokens(ContextWindow(4096, "x"))[0] == 1024
    assert default_max_tokens(ContextWindow(8192, "x"))[0] == MAX_REPLY_TOKENS
    assert default_max_tokens(ContextWindow(1_000_000, "x"))[0] == MAX_REPLY_TOKENS
    assert default_max_tokens(ContextWindow(16, "x"))[0] == 4
    assert default_max_tokens(None)[0] == 1024


# --- retrieval ---------------------------------------------------------------------------------


@pytest.mark.parametrize("flags", EVERY_STRATEGY[:2] + EVERY_STRATEGY[5:6], ids=" ".join)
def test_a_short_list_of_tools_is_always_sent_whole(tmp_path: Path, flags: tuple[str, ...]) -> None:
    _, events, body = first_run(tmp_path, LLAMA_PROPS, *flags)
    assert tools_sent(events) == []
    text = json.dumps(body)
    for name in ("calculate", "get_time", "convert_units", "get_weather"):
        assert name in text
    assert "search_tools" not in text
    assert not said(events, "ranked best")


@pytest.mark.parametrize("flags", EVERY_STRATEGY[:3] + EVERY_STRATEGY[5:6], ids=" ".join)
def test_from_10_tools_a_small_model_gets_the_3_best_ranked_and_the_view_says_why(
    tmp_path: Path, flags: tuple[str, ...]
) -> None:
    tools = more_tools(tmp_path, 6)  # 10 with the bundled 4
    _, events, _ = first_run(tmp_path, LLAMA_PROPS, *flags, "--tools", str(tools))
    (sent,) = tools_sent(events)
    assert len(sent) == 3 and sent[-1] == "search_tools"
    (line,) = said(events, "ranked best")
    assert line.startswith(SMALL_MODEL)
    assert "at most 3 of the 10 tools" in line and "(--retrieve 3, from 10 tools up)" in line
    assert line.endswith("--retrieve 0 sends every tool")


def test_9_tools_are_sent_whole(tmp_path: Path) -> None:
    tools = more_tools(tmp_path, 5)
    _, events, _ = first_run(tmp_path, LLAMA_PROPS, "--strategy", "regex", "--tools", str(tools))
    assert tools_sent(events) == [] and not said(events, "ranked best")


@pytest.mark.parametrize(
    ("flags", "env", "sent"),
    [
        (("--retrieve", "0"), None, 0),
        (("--retrieve", "2"), None, 2),
        ((), {"TOOLCALL_RETRIEVE": "0"}, 0),
        (("--retrieve-over", "12"), None, 0),
    ],
)
def test_a_retrieval_chosen_anywhere_is_kept(
    tmp_path: Path, flags: tuple[str, ...], env: dict[str, str | None] | None, sent: int
) -> None:
    tools = more_tools(tmp_path, 6)
    _, events, _ = first_run(tmp_path, LLAMA_PROPS, *flags, "--tools", str(tools), env=env)
    assert [len(tools) for tools in tools_sent(events)] == ([sent] if sent else [])
    assert not said(events, "ranked best")


def test_an_explicit_retrieve_still_hides_tools_from_a_short_list(tmp_path: Path) -> None:
    _, events, _ = first_run(tmp_path, LLAMA_PROPS, "--retrieve", "3")
    (sent,) = tools_sent(events)
    assert len(sent) == 3 and sent[-1] == "search_tools"


def test_past_a_chosen_retrieve_over_a_small_model_gets_3_tools(tmp_path: Path) -> None:
    _, events, _ = first_run(tmp_path, LLAMA_PROPS, "--retrieve-over", "3")
    (sent,) = tools_sent(events)
    assert len(sent) == 3
    (line,) = said(events, "ranked best")
    assert "(--retrieve 3, past --retrieve-over 3)" in line


def test_the_library_s_own_tools_count(tmp_path: Path) -> None:
    """ask(tools=...) adds its functions before the defaults are chosen: 12 of them are a long
    list."""

    def make(n: int) -> Any:
        def lookup(word: str) -> str:
            return word

        lookup.__name__ = f"lookup_{n}"
        lookup.__doc__ = f"Look a word up in dictionary number {n}."
        return lookup

    with FakeOpenAI() as server:
        server.props = LLAMA_PROPS
        server.answers.append(Answer(json_body=completion(JSON_ANSWER)))
        events = list(
            toolcall_cli.ask(
                "hi", tools=[make(n) for n in range(12)], base_url=server.base_url, model="m"
            )
        )
    (chosen,) = [e for e in events if e.kind == "tools_chosen"]
    assert chosen.total == 12 and len(chosen.sent) == 3


# --- compare, eval and prompt --all ------------------------------------------------------------


def test_every_strategy_compared_is_sent_the_defaults(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        server.props = LLAMA_PROPS
        done = toolcall(
            "prompt", "hi", "--all", "--json", "--base-url", server.base_url, "--model", "m",
            "--max-tokens", "77", cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    bodies = {r["label"]: r["body"] for r in json.loads(done.stdout)["requests"]}
    assert len(bodies) == 5
    for label, body in bodies.items():
        assert (body["temperature"], body["max_tokens"]) == (0, 77), label


# --- the view ----------------------------------------------------------------------------------


def test_the_plain_view_says_each_default_in_one_line(tmp_path: Path) -> None:
    tools = more_tools(tmp_path, 6)
    with FakeOpenAI() as server:
        server.props = LLAMA_PROPS
        server.answers.append(Answer(json_body=completion("Hello there.")))
        done = toolcall(
            "run", "hi", "--base-url", server.base_url, "--model", "m", "-s", "regex",
            "--tools", str(tools), cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = [ln for ln in done.stdout.splitlines() if SMALL_MODEL in ln]
    assert len(lines) == 2
    assert "temperature 0" in lines[0] and "max_tokens 1024" in lines[0]
    assert "at most 3 of the 10 tools" in lines[1]


def test_the_live_view_says_the_defaults(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        server.props = LLAMA_PROPS
        server.answers.append(Answer(json_body=completion("Hello there.")))
        events = list(toolcall_cli.ask("hi", base_url=server.base_url, model="m", strategy="regex"))
    out = io.StringIO()
    console = Console(file=out, width=300, color_system=None)
    renderer = make_renderer("live", console, auto_refresh=False)
    for event in events:
        renderer.handle(event)
    renderer.close()
    shown = out.getvalue()
    assert (
        "temperature 0 (the server's own is 0.8), max_tokens 1024 (a quarter of the "
        "4,096-token window)" in shown
    )


def test_a_chat_s_strategy_switch_keeps_the_defaults(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        server.props = LLAMA_PROPS
        options = SessionOptions.of(base_url=server.base_url, model="m", strategy="regex")
        assembled = build_session(options, warn=lambda _: None)
        session = assembled.session
        try:
            session.use_strategy("stream")  # chat's /strategy stream
            body = first_request(session, "hi")
        finally:
            session.close()
    assert body["stream"] is True
    assert (body["temperature"], body["max_tokens"]) == (0, 1024)


# --- chat's /model --------------------------------------------------------------------------------


def chat_on(assembled: Assembled, keys: str, tmp_path: Path) -> None:
    """The chat the CLI runs on `assembled`, `keys` typed into it: /model as `toolcall chat`
    does it."""
    with create_pipe_input() as pipe:
        pipe.send_text(keys)
        chat = piped_chat(assembled.session, pipe, tmp_path, use_model=assembled.use_model)
        assert chat.loop() == 0


def run_headers(out: str) -> list[str]:
    """The plain view's first line of each run: the model, strategy, sampling and tools."""
    return [line for line in out.splitlines() if re.match(r"model \S+, strategy ", line)]


def test_a_model_switched_to_in_chat_leaves_the_first_model_s_defaults_behind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A chat begun on a llama.cpp server, switched to the offline model: the offline model runs
    under its own defaults (the text protocol, no sampling sent), not the server's."""
    with FakeOpenAI() as server:
        server.props = LLAMA_PROPS
        options = SessionOptions.of(base_url=server.base_url, model="m")
        assembled = build_session(options, warn=lambda _: None)
        try:
            assert assembled.session.strategy.name == "schema"  # the server's measured default
            chat_on(assembled, "/model offline\rWhat is 2+3?\r\x04", tmp_path)
            body = first_request(assembled.session, "hi")
        finally:
            assembled.session.close()
    (header,) = run_headers(capsys.readouterr().out)
    assert header.startswith("model offline, strategy regex, tools:"), header
    assert "temperature" not in body and "max_tokens" not in body and "response_format" not in body


def test_a_llama_cpp_model_switched_to_in_chat_gets_the_defaults_for_a_small_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chat begun on the offline model (the endpoint set in the environment), switched to a
    model at a llama.cpp server: that model gets what `run` would give it, and the view says so."""
    with FakeOpenAI() as server:
        server.props = LLAMA_PROPS
        server.answers.append(Answer(json_body=completion(JSON_ANSWER)))
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        assembled = build_session(SessionOptions.of(model="offline"), warn=lambda _: None)
        try:
            chat_on(assembled, "/model m\rhi\r\x04", tmp_path)
        finally:
            assembled.session.close()
        (body,) = server.requests
    assert (body["temperature"], body["max_tokens"]) == (0, 1024)
    assert body["response_format"]["type"] == "json_schema"
    out = capsys.readouterr().out
    assert run_headers(out) == [
        "model m, strategy schema, temperature 0, max_tokens 1024, tools: calculate, get_time, "
        "convert_units, get_weather"
    ]
    assert out.count(SMALL_MODEL) == 1 and out.count("llama.cpp server: strategy schema") == 1


def test_what_the_user_chose_stays_across_a_chat_s_model_switch(tmp_path: Path) -> None:
    """A temperature given by flag, and a strategy chosen by /strategy, are kept when the model
    changes; only what nobody chose follows the model (max_tokens here)."""
    with FakeOpenAI() as server:
        server.props = LLAMA_PROPS
        options = SessionOptions.of(base_url=server.base_url, model="m", temperature=0.5)
        assembled = build_session(options, warn=lambda _: None)
        session = assembled.session
        try:
            chat_on(assembled, "/strategy stream\r/model offline\r\x04", tmp_path)
            offline = first_request(session, "hi")
            chat_on(assembled, "/model m\r\x04", tmp_path)
            served = first_request(session, "hi")
        finally:
            session.close()
    assert session.strategy.name == "stream"
    assert offline["temperature"] == 0.5 and "max_tokens" not in offline
    assert (served["temperature"], served["max_tokens"]) == (0.5, 1024)
