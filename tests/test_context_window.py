"""The context window: learned from --context-window, a profile or the server (llama.cpp's
/props, Ollama's /api/show); each request fitted into it; a context-length error compacted and
retried once, visibly. Against a real HTTP server on 127.0.0.1, or httpx.MockTransport."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_openai import Answer, FakeOpenAI, completion
from typer.testing import CliRunner

from toolcall_cli.cli import app
from toolcall_cli.config import ConfigError, load_config
from toolcall_cli.events import Event, FinalAnswer, IterationStarted, ModelFailed, Notice
from toolcall_cli.loop import Limits, run
from toolcall_cli.messages import Message, ToolCall, ToolResult, tool_message, user
from toolcall_cli.models.openai_compat import Endpoint, OpenAICompatModel
from toolcall_cli.strategies import get_strategy
from toolcall_cli.tools.loader import bundled_tools_dir, load_tools
from toolcall_cli.wire import ContextWindow, ModelError, ModelRequest
from toolcall_cli.wire.tokens import estimate_tokens, request_tokens

KEY = "sk-CONTEXT-0123456789"
LLAMA_TOO_LONG = {
    "error": {
        "code": 400,
        "message": "request (4500 tokens) exceeds the available context size (4096 tokens), "
        "try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 4500,
        "n_ctx": 4096,
    }
}


OPENED: list[OpenAICompatModel] = []


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        try:
            yield fake
        finally:
            while OPENED:
                OPENED.pop().close()


def model_at(server: FakeOpenAI, api_key: str | None = None) -> OpenAICompatModel:
    # A probe timeout far past the product's 3 s: a loaded test machine can be slower than that
    # to answer /props, and then the window is (rightly) unknown and nothing is fitted.
    model = OpenAICompatModel(
        Endpoint(base_url=server.base_url, model="m", api_key=api_key), probe_timeout=60.0
    )
    OPENED.append(model)
    return model


def long_history(rounds: int = 6, result_chars: int = 3000) -> list[Message]:
    """Earlier turns of a conversation: tool rounds with big results."""
    history = [user("earlier question")]
    for i in range(rounds):
        call = ToolCall(id=f"call_{i}", name="get_weather", arguments={"city": f"City{i}"})
        history.append(Message(role="assistant", content=None, tool_calls=(call,)))
        result = ToolResult(call_id=call.id, name=call.name, content=f"{i}:" + "x" * result_chars)
        history.append(tool_message(result))
    history.append(Message(role="assistant", content="that was the weather"))
    return history


def ask(
    model: Any,
    history: list[Message] | None = None,
    strategy: str = "schema",
    question: str = "what now?",
    **limits: Any,
) -> list[Event]:
    registry = load_tools([bundled_tools_dir()]).registry
    return list(
        run(
            question,
            model=model,
            strategy=get_strategy(strategy),
            registry=registry,
            history=history if history is not None else [],
            limits=Limits(**limits),
        )
    )


def notices(events: list[Event]) -> list[str]:
    return [e.message for e in events if isinstance(e, Notice)]


def toolcall(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env=env)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def json_notices(stdout: str) -> list[str]:
    records = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    return [r["message"] for r in records if r["kind"] == "notice"]


# --- learning the window --------------------------------------------------------------------


def test_the_window_comes_from_the_flag() -> None:
    code, out, _ = toolcall("run", "--json", "--context-window", "4096", "what is 2+3?")
    assert code == 0
    assert "context window 4,096 tokens (from --context-window)" in json_notices(out)


def test_without_a_window_the_offline_model_says_none() -> None:
    code, out, _ = toolcall("run", "--json", "what is 2+3?")
    assert code == 0
    assert not [n for n in json_notices(out) if "context window" in n]


@pytest.mark.parametrize("window", ["10", "0", "-5", "lots"])
def test_a_window_flag_that_cannot_be_one_is_a_usage_error(window: str) -> None:
    code, _, err = toolcall("run", "--context-window", window, "hi")
    assert code == 2 and "--context-window" in err


def test_the_window_comes_from_a_profile_and_the_server_is_not_asked(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    server.props = {"default_generation_settings": {"n_ctx": 9999}}
    server.answers.append(Answer(json_body=completion("fine")))
    config = tmp_path / "config.toml"
    config.write_text(
        f'[profiles.local]\nbase_url = "{server.base_url}"\nmodel = "m"\ncontext_window = 3000\n'
        # A strategy, temperature and max_tokens too: with any of them left open, toolcall
        # asks the server what it is, for the defaults of a small model
        # (tests/test_measured_default.py). Retrieval with 4 tools is never one of them.
        'strategy = "regex"\ntemperature = 0.5\nmax_tokens = 300\n',
        encoding="utf-8",
    )
    code, out, _ = toolcall(
        "run", "--json", "--profile", "local", "hi", env={"TOOLCALL_CONFIG": str(config)}
    )
    assert code == 0
    assert "context window 3,000 tokens (from profile 'local')" in json_notices(out)
    assert server.probes == []


def test_the_flag_comes_before_the_profile(server: FakeOpenAI, tmp_path: Path) -> None:
    server.answers.append(Answer(json_body=completion("fine")))
    config = tmp_path / "config.toml"
    config.write_text(
        f'[profiles.local]\nbase_url = "{server.base_url}"\nmodel = "m"\ncontext_window = 3000\n',
        encoding="utf-8",
    )
    env = {"TOOLCALL_CONFIG": str(config)}
    code, out, _ = toolcall(
        "run", "--json", "-p", "local", "--context-window", "8192", "hi", env=env
    )
    assert code == 0 and "context window 8,192 tokens (from --context-window)" in json_notices(out)


@pytest.mark.parametrize("value", ['"4096"', "10", "true", "4096.5"])
def test_a_profile_window_that_cannot_be_one_is_a_config_error(tmp_path: Path, value: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        f'[profiles.local]\nbase_url = "http://127.0.0.1:1/v1"\ncontext_window = {value}\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match="context_window"):
        load_config(config)


@pytest.mark.parametrize(
    "props",
    [{"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1}, {"n_ctx": 4096}],
)
def test_the_window_comes_from_llama_cpp_props(server: FakeOpenAI, props: Any) -> None:
    server.props = props
    server.answers.append(Answer(json_body=completion("fine")))
    events = ask(model_at(server))
    assert "context window 4,096 tokens (from the server's /props)" in notices(events)
    assert [(method, path) for method, path, _, _ in server.probes] == [("GET", "/props")]


def test_the_window_comes_from_ollama_num_ctx_first(server: FakeOpenAI) -> None:
    server.show = {
        "parameters": 'stop "<|im_end|>"\nnum_ctx 8192',
        "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768},
    }
    server.answers.append(Answer(json_body=completion("fine")))
    events = ask(model_at(server))
    assert "context window 8,192 tokens (from num_ctx in Ollama's /api/show)" in notices(events)
    method, path, _, body = server.probes[-1]
    assert (method, path, body) == ("POST", "/api/show", {"model": "m"})


MORE = "set num_ctx in its model file, or OLLAMA_CONTEXT_LENGTH on the server, for more"


@pytest.mark.parametrize(
    ("version", "window", "source"),
    [
        # Ollama's default num_ctx: 2,048 before 0.6.7, 4,096 from it, and from 0.15.5 4,096
        # or more by the GPU's memory, which no API says.
        ({"version": "0.5.12"}, 2048, "Ollama's default num_ctx in 0.5.12"),
        ({"version": "0.6.7"}, 4096, "Ollama's default num_ctx in 0.6.7"),
        (
            {"version": "0.15.5"},
            4096,
            "Ollama's default num_ctx in 0.15.5 with under 24 GiB of VRAM (more above)",
        ),
        (None, 2048, "Ollama's default num_ctx"),  # no version said: the oldest, the least
        ({"version": "0.0.0"}, 2048, "Ollama's default num_ctx"),  # a build from source
    ],
)
def test_an_ollama_model_without_num_ctx_gets_ollamas_default_not_its_own_length(
    server: FakeOpenAI, version: Any, window: int, source: str
) -> None:
    """The window was the model's `context_length` (32,768 here), while Ollama runs a model
    whose file sets no num_ctx with its default, far less: requests were not fitted, and
    Ollama cut their start (the system prompt, the tools) without a word."""
    server.show = {"model_info": {"qwen2.context_length": 32768}, "parameters": "stop x"}
    server.version = version
    server.answers.append(Answer(json_body=completion("fine")))
    events = ask(model_at(server))
    said = f"context window {window:,} tokens (from {source}; the model takes 32,768: {MORE})"
    assert said in notices(events)
    assert [(method, path) for method, path, _, _ in server.probes] == [
        ("GET", "/props"),
        ("POST", "/api/show"),
        ("GET", "/api/ps"),
        ("GET", "/api/version"),
    ]


def test_an_ollama_model_loaded_now_has_the_window_it_was_loaded_with(server: FakeOpenAI) -> None:
    server.show = {"model_info": {"qwen2.context_length": 32768}, "parameters": "stop x"}
    server.ps = {
        "models": [
            {"name": "other:latest", "model": "other:latest", "context_length": 2048},
            {"name": "m:latest", "model": "m:latest", "context_length": 8192},
        ]
    }
    server.answers.append(Answer(json_body=completion("fine")))
    events = ask(model_at(server))  # asked for as `m`: Ollama's `m:latest`
    assert "context window 8,192 tokens (from Ollama's /api/ps: the model as it is loaded)" in (
        notices(events)
    )


def test_an_ollama_model_smaller_than_the_default_keeps_its_own_length(
    server: FakeOpenAI,
) -> None:
    server.show = {"model_info": {"tiny.context_length": 1024}, "parameters": "stop x"}
    server.version = {"version": "0.9.0"}
    server.answers.append(Answer(json_body=completion("fine")))
    events = ask(model_at(server))
    assert "context window 1,024 tokens (from Ollama's /api/show)" in notices(events)


@pytest.mark.parametrize(
    "props",
    [
        {"default_generation_settings": {"n_ctx": -1}},
        {"n_ctx": "4096"},
        {"n_ctx": True},
        {"n_ctx": 10**30},
        [4096],
        Answer(raw=b"{not json"),
        Answer(status=500, json_body={"error": "busy"}),
    ],
)
def test_a_server_that_says_nothing_usable_leaves_the_window_unknown(
    server: FakeOpenAI, props: Any
) -> None:
    server.props = props
    server.answers += [Answer(json_body=completion("fine")) for _ in range(2)]
    model = model_at(server)
    first, second = ask(model), ask(model)
    for events in (first, second):
        assert not [n for n in notices(events) if "context window" in n]
        assert any(isinstance(e, FinalAnswer) and e.text == "fine" for e in events)
    assert len(server.probes) == 2  # /props and /api/show, asked once for the session


def test_the_probe_carries_the_key_only_to_its_own_origin(server: FakeOpenAI) -> None:
    with FakeOpenAI() as elsewhere:
        elsewhere.props = {"n_ctx": 4096}
        server.props = Answer(status=302, headers={"Location": f"{elsewhere.base_url}/../props"})
        server.answers.append(Answer(json_body=completion("fine")))
        events = ask(model_at(server, api_key=KEY))
        assert elsewhere.probes == [] and elsewhere.requests == []
    assert not [n for n in notices(events) if "context window" in n]
    for _, _, headers, _ in server.probes:
        assert headers.get("authorization") == f"Bearer {KEY}"


def test_no_probe_goes_anywhere_but_the_base_url_origin() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(404, json={"error": {"message": "nope"}})

    base = "https://proxy.example:8443/llm/v1?api-version=1"
    model = OpenAICompatModel(
        Endpoint(base_url=base, model="m", api_key=KEY), transport=httpx.MockTransport(handler)
    )
    assert model.context_window() is None and model.context_window() is None
    assert [(r.method, str(r.url)) for r in seen] == [
        ("GET", "https://proxy.example:8443/llm/props"),
        ("POST", "https://proxy.example:8443/llm/api/show"),
    ]


# --- fitting each request -------------------------------------------------------------------


def test_a_long_history_is_fitted_into_the_window_and_the_kept_history_is_unchanged(
    server: FakeOpenAI,
) -> None:
    server.props = {"default_generation_settings": {"n_ctx": 2048}}
    server.answers.append(Answer(json_body=completion("fine")))
    history = long_history()
    before = list(history)
    events = ask(model_at(server), history)
    sent = server.requests[0]
    assert request_tokens(sent) <= 2048 - 512
    fitted = [n for n in notices(events) if n.startswith("fitted the request")]
    assert len(fitted) == 1
    assert fitted[0].startswith("fitted the request into the 2,048-token window: ")
    assert " older round summarised" in fitted[0] or " older rounds summarised" in fitted[0]
    assert history[: len(before)] == before
    assert any(isinstance(e, FinalAnswer) and e.text == "fine" for e in events)


def test_long_results_are_cut_in_what_is_sent_when_summaries_are_not_enough(
    server: FakeOpenAI,
) -> None:
    server.props = {"n_ctx": 2048}
    server.answers.append(Answer(json_body=completion("fine")))
    history = long_history(rounds=2, result_chars=6000)
    events = ask(model_at(server), history, history_rounds=1)
    sent = json.dumps(server.requests[0]["messages"])
    assert request_tokens(server.requests[0]) <= 2048 - 512
    assert "cut to fit the context window" in sent
    assert "fitted the request into the 2,048-token window: 1 result cut" in notices(events)
    assert len(history[4].content or "") == 6002  # the kept result is whole


def test_a_request_that_cannot_fit_is_sent_anyway_saying_so() -> None:
    from toolcall_cli.models.scripted import ScriptedModel

    events = ask(
        ScriptedModel(["an answer"]),
        strategy="regex",
        question="why? " * 1500,
        context_window=ContextWindow(1024, "--context-window"),
    )
    warned = [n for n in notices(events) if "does not fit the 1,024-token window" in n]
    assert warned and warned[0].endswith("sent anyway")
    assert any(isinstance(e, FinalAnswer) for e in events)


def test_a_request_that_fits_is_sent_as_it_was(server: FakeOpenAI) -> None:
    server.props = {"n_ctx": 32768}
    server.answers.append(Answer(json_body=completion("fine")))
    history = long_history()
    events = ask(model_at(server), history)
    assert not [n for n in notices(events) if n.startswith("fitted")]
    assert "x" * 3000 in json.dumps(server.requests[0]["messages"])


def test_cjk_text_counts_a_token_a_character() -> None:
    assert estimate_tokens("北京今天天气怎么样" * 100) >= 900
    assert 250 <= estimate_tokens("the weather in Paris " * 50) <= 400


# --- a context-length error: compact and retry once -----------------------------------------


def test_a_context_length_error_is_compacted_and_retried_once_visibly(server: FakeOpenAI) -> None:
    server.answers += [
        Answer(status=400, json_body=LLAMA_TOO_LONG),
        Answer(json_body=completion("fine")),
    ]
    history = long_history()
    events = ask(model_at(server), history)
    assert (
        "the server said the request was too long (4,500 > 4,096 tokens): compacted and retried"
        in notices(events)
    )
    assert any(isinstance(e, FinalAnswer) and e.text == "fine" for e in events)
    first, second = server.requests
    assert request_tokens(second) < request_tokens(first)
    assert len([e for e in events if isinstance(e, IterationStarted)]) == 2


def test_a_second_context_length_error_ends_the_run_in_one_line(server: FakeOpenAI) -> None:
    server.answers += [Answer(status=400, json_body=LLAMA_TOO_LONG) for _ in range(2)]
    code, _, err = toolcall("run", "--quiet", "--model", "m", "--base-url", server.base_url, "hi")
    assert code == 1
    assert err.count("\n") == 1 and err.startswith("toolcall: error: ")
    assert "context window" in err and "4,500 > 4,096" in err
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    ("status", "body", "window", "prompt"),
    [
        (400, LLAMA_TOO_LONG, 4096, 4500),
        (
            400,
            {
                "error": {
                    "message": "the request exceeds the available context size, try increasing it",
                    "type": "exceed_context_size_error",
                }
            },
            None,
            None,
        ),
        (
            400,
            {
                "error": {
                    "message": "This model's maximum context length is 8192 tokens. However, "
                    "your messages resulted in 9000 tokens.",
                    "type": "invalid_request_error",
                    "code": "context_length_exceeded",
                }
            },
            8192,
            9000,
        ),
        (
            400,
            {
                "object": "error",
                "message": "This model's maximum context length is 4096 tokens. However, you "
                "requested 5000 tokens (4000 in the messages, 1000 in the completion).",
                "type": "BadRequestError",
                "code": 400,
            },
            4096,
            5000,
        ),
        (400, {"error": "prompt too long; exceeded max context length by 12 tokens"}, None, None),
        (413, {"error": {"message": "input is too long for the context window"}}, None, None),
    ],
)
def test_servers_ways_of_saying_too_long_are_one_kind(
    status: int, body: Any, window: int | None, prompt: int | None
) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=iter([json.dumps(body).encode()]))

    model = OpenAICompatModel(
        Endpoint(base_url="http://127.0.0.1:9/v1", model="m", max_retries=0),
        transport=httpx.MockTransport(handler),
    )
    with pytest.raises(ModelError) as caught:
        list(model.stream(ModelRequest({"messages": []})))
    assert caught.value.kind == "context_length"
    assert (caught.value.window, caught.value.prompt_tokens) == (window, prompt)


def test_other_bad_requests_are_not_context_errors() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        said = {"error": {"message": "temperature must be <= 2"}}
        return httpx.Response(400, content=iter([json.dumps(said).encode()]))

    model = OpenAICompatModel(
        Endpoint(base_url="http://127.0.0.1:9/v1", model="m", max_retries=0),
        transport=httpx.MockTransport(handler),
    )
    with pytest.raises(ModelError) as caught:
        list(model.stream(ModelRequest({"messages": []})))
    assert caught.value.kind == "bad_request"


def test_a_context_error_in_the_stream_is_retried_too(server: FakeOpenAI) -> None:
    server.answers += [
        Answer(sse=[json.dumps(LLAMA_TOO_LONG)]),
        Answer(json_body=completion("fine")),
    ]
    events = ask(model_at(server), long_history(), strategy="stream")
    assert any("compacted and retried" in n for n in notices(events))
    assert not [e for e in events if isinstance(e, ModelFailed)]
