"""`toolcall serve` as a real process on a free port, answering the `openai` client, the loops
`toolcall eject` prints, `toolcall run --base-url` and bad requests; and `toolcall eject`."""

from __future__ import annotations

import ast
import json
import os
import queue
import re
import runpy
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from in_process import toolcall
from terminal_signals import as_from_a_terminal

from toolcall_cli.eject import PROGRAMS
from toolcall_cli.serve import host_note

URL_RE = re.compile(r"http://127\.0\.0\.1:\d+/v1")
EXCHANGE_RE = re.compile(r"#\d+ .*? (\d{3})(?=[: ]|$)", re.MULTILINE)
"""An exchange's status in the log: "#3 POST /v1/models 405", or a request line http.server could
not read, "#4 {"model": "mm"}POST /models 501: Unsupported method"."""
WAIT = 20.0
"""Seconds a step may take before the test fails instead of hanging."""
WEATHER_TOOL: Any = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather (天气) for a city: condition and temperature in °C.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "e.g. Beijing"}},
            "required": ["city"],
        },
    },
}
QUESTION: Any = [{"role": "user", "content": "What's the weather in Beijing?"}]
"""Typed `Any`: the SDK's own TypedDicts add nothing to a test of the server."""


@dataclass
class Served:
    """A `toolcall serve` process, its URL, and what it has printed so far."""

    process: subprocess.Popen[str]
    url: str
    lines: queue.Queue[str]
    reader: threading.Thread
    seen: list[str] = field(default_factory=list)

    def wait_for(self, text: str) -> str:
        """The log, up to the first line holding `text` (printed once an exchange is done)."""
        while not any(text in line for line in self.seen):
            self.read_line(text)
        return self.log

    def wait_for_next(self, text: str) -> str:
        """The log, up to the next line holding `text` that was not read before: the log of an
        exchange whose text an earlier one printed too."""
        while text not in self.read_line(text):
            pass
        return self.log

    def read_line(self, text: str) -> str:
        try:
            self.seen.append(self.lines.get(timeout=WAIT))
        except queue.Empty:
            raise AssertionError(f"serve never printed {text!r}:\n{self.log}") from None
        return self.seen[-1]

    @property
    def log(self) -> str:
        return "".join(self.seen)

    @property
    def statuses(self) -> list[str]:
        """The HTTP status of each exchange the log names ("#3 POST /v1/models 405"): read from
        there, not searched for in the whole log, whose URL holds a port that may be 33501."""
        return EXCHANGE_RE.findall(self.log)

    def stop(self, by: signal.Signals = signal.SIGINT) -> tuple[int, str, str]:
        """Ctrl-C, as a user stops it (or `by`): the exit code, all it printed, and stderr."""
        self.process.send_signal(by)
        code = self.process.wait(timeout=WAIT)
        self.reader.join(timeout=WAIT)  # it reads stdout to its end
        while not self.lines.empty():
            self.seen.append(self.lines.get())
        assert self.process.stdout is not None and self.process.stderr is not None
        with self.process.stdout, self.process.stderr:
            return code, self.log, self.process.stderr.read()


def start_serve(*flags: str) -> Served:
    env = {**os.environ, "COLUMNS": "200", "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "toolcall_cli", "serve", "--port", "0", *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        env=env,
        preexec_fn=as_from_a_terminal,  # stopped by Ctrl-C's SIGINT (and SIGHUP) below
    )
    assert process.stdout is not None
    lines: queue.Queue[str] = queue.Queue()
    stdout = process.stdout

    def read() -> None:  # a thread, so that a test waits on a queue with a deadline
        for line in iter(stdout.readline, ""):
            lines.put(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    served = Served(process, "", lines, reader)
    found = URL_RE.search(served.wait_for("http://"))
    assert found, served.log
    served.url = found.group(0)
    return served


@pytest.fixture(scope="module")
def serve() -> Iterator[Served]:
    served = start_serve()
    yield served
    code, _, err = served.stop()
    assert (code, err) == (0, "")


@pytest.fixture(scope="module")
def faulty() -> Iterator[Served]:
    served = start_serve("--faults", "unknown_tool,single_quotes", "--seed", "3")
    yield served
    code, _, err = served.stop()
    assert (code, err) == (0, "")


Client = Callable[[Served], openai.OpenAI]


@pytest.fixture
def client() -> Iterator[Client]:
    """OpenAI SDK clients on a served URL, each closed when the test ends. Left to the garbage
    collector, a client's socket may be finalized before the client's own __del__ closes it:
    an unclosed-socket ResourceWarning then fails whichever later test the collection ran in."""
    made: list[openai.OpenAI] = []

    def make(served: Served) -> openai.OpenAI:
        sdk = openai.OpenAI(base_url=served.url, api_key="practice", max_retries=0, timeout=WAIT)
        made.append(sdk)
        return sdk

    yield make
    for sdk in made:
        sdk.close()


# --- toolcall eject ----------------------------------------------------------------------------


def ejected(strategy: str, tmp_path: Path) -> Path:
    path = tmp_path / f"{strategy}_mine.py"
    done = toolcall("eject", "--strategy", strategy, "--output", str(path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return path


def usage_questions() -> list[str]:
    """The questions the README's and Getting started's command blocks ask (`run`, `prompt`,
    `compare`), in order; not the placeholder of a recorded run played back (`--script`), which
    asks nothing of its own."""
    root = Path(__file__).parent.parent
    pages = (root / "README.md", root / "docs" / "getting-started.md")
    blocks = [
        block.split("```", 1)[0]
        for page in pages
        for block in page.read_text(encoding="utf-8").split("```bash\n")[1:]
    ]
    lines = [line for block in blocks for line in block.splitlines() if "--script" not in line]
    asked = [re.search(r'^toolcall (?:run|prompt|compare)\b[^"]*"([^"]+)"', x) for x in lines]
    return list(dict.fromkeys(found.group(1) for found in asked if found))


USAGE_QUESTIONS = usage_questions()


def test_the_usage_block_asks_in_both_languages() -> None:
    """Keeps the reading of the docs honest: the questions below are really their own."""
    assert (
        "What's 12*5+3?" in USAGE_QUESTIONS and "北京和上海明天天气分别是多少？" in USAGE_QUESTIONS
    )
    assert len(USAGE_QUESTIONS) >= 4


def run_ejected(program: Path, question: str, served: Served) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(program), question],
        env={**os.environ, "OPENAI_BASE_URL": served.url},
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=WAIT * 3,
    )


@pytest.mark.parametrize("strategy", list(PROGRAMS))
@pytest.mark.parametrize("question", USAGE_QUESTIONS)
def test_each_ejected_program_answers_every_usage_question_through_serve(
    serve: Served, strategy: str, question: str, tmp_path: Path
) -> None:
    """Answered from the program's own tools: every city of its table the question names,
    with that city's weather (in °F when the question asks for Fahrenheit); every sum in the
    question, worked out; and no tool failed."""
    program = ejected(strategy, tmp_path)
    done = run_ejected(program, question, serve)
    assert (done.returncode, done.stderr) == (0, ""), done.stdout
    answer = done.stdout
    assert answer.strip() and not re.search(r"error|sorry|failed|抱歉|失败", answer, re.I), answer
    own = runpy.run_path(str(program))  # its table and its calculator, not this test's
    fahrenheit = re.search(r"fahrenheit|华氏", question, re.I)
    for city in own["WEATHER"]:
        if city in question.lower():
            report = own["get_weather"](city)
            figure = f"{report['temp_f']:g}°F" if fahrenheit else f"{report['temp_c']}°C"
            said = [f"{report['condition']}{comma}{figure}" for comma in ("，", ", ")]
            assert any(s in answer for s in said), (said, answer)
    for expression in re.findall(r"\d[\d.]*(?:\s*[-+*/]\s*\d[\d.]*)+", question):
        assert f"= {own['calculate'](expression)}" in answer, answer


@pytest.mark.parametrize("strategy", list(PROGRAMS))
def test_a_failed_call_goes_back_under_its_tools_name(
    serve: Served, strategy: str, tmp_path: Path
) -> None:
    """A city the table lacks: the KeyError is the result of that get_weather call, named so
    (a text protocol's block says name="get_weather", not "?"), and the answer says it failed."""
    done = run_ejected(ejected(strategy, tmp_path), "What's the weather in Reykjavik?", serve)
    assert done.returncode == 0 and "KeyError: 'reykjavik'" in done.stdout, done.stderr
    log = serve.wait_for_next("← Sorry, get_weather failed: KeyError: 'reykjavik'")
    said = [line for line in log.splitlines() if "KeyError: 'reykjavik'" in line]
    fed = said[-2]  # what the program sent back, in the request the answer came to
    if strategy == "schema":
        assert "tool [call_" in fed
    else:
        assert 'name="get_weather"' in fed and 'name="?"' not in fed


def test_the_stream_program_joins_tags_split_across_chunks(tmp_path: Path) -> None:
    served = start_serve("--faults", "split_tags,missing_close_tag")
    try:
        done = subprocess.run(
            [sys.executable, str(ejected("stream", tmp_path)), "What's 12*5+3?"],
            env={**os.environ, "OPENAI_BASE_URL": served.url},
            capture_output=True,
            text=True,
            timeout=WAIT * 3,
        )
        log = served.wait_for("= 63")
    finally:
        code, _, err = served.stop()
    assert (done.returncode, done.stdout.splitlines()[-1]) == (0, "12*5+3 = 63"), done.stderr
    assert "⚠ fault split_tags" in log and "⚠ fault missing_close_tag" in log
    assert "<tool_call>" not in done.stdout  # the call text is parsed, never shown
    assert (code, err) == (0, "")


def test_the_schema_program_checks_arguments_so_the_model_can_fix_them(tmp_path: Path) -> None:
    served = start_serve("--faults", "wrong_param")
    try:
        done = subprocess.run(
            [sys.executable, str(ejected("schema", tmp_path)), "What's the weather in Beijing?"],
            env={**os.environ, "OPENAI_BASE_URL": served.url},
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=WAIT * 3,
        )
        log = served.wait_for("8°C")
    finally:
        code, _, err = served.stop()
    assert done.returncode == 0 and "8°C" in done.stdout, done.stderr
    assert "⚠ fault wrong_param" in log
    # What the program fed back, as the next request carried it: both problems, one go.
    assert re.search(r"error: invalid arguments: missing required argument 'city'; unexpected", log)
    assert (code, err) == (0, "")


def test_a_key_sent_in_the_query_is_never_logged(serve: Served) -> None:
    # Azure-style clients send `?api-key=...`; the log printed the path as it came
    url = f"{serve.url}/chat/completions?api-key=sk-query-secret-123&v=1"
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    assert httpx.post(url, json=body, timeout=WAIT).status_code == 200
    log = serve.wait_for_next("/chat/completions?api-key=****&v=****")
    assert "sk-query-secret-123" not in log


def test_a_bare_key_in_the_query_or_the_path_is_never_logged() -> None:
    from toolcall_cli.serve._http import logged_path

    assert logged_path("/v1/models?sk-live-123") == "/v1/models?****"
    assert (
        logged_path("http://u:hunter2@127.0.0.1:1/v1/models") == "http://****@127.0.0.1:1/v1/models"
    )
    assert "abcdefghijklmnop" not in logged_path("/v1/sk-proj-abcdefghijklmnopqrstuvwxyz0123")
    assert logged_path("/v1/models") == "/v1/models"


def test_against_wrong_param_the_schema_program_recovers_a_round_before_the_others(
    tmp_path: Path,
) -> None:
    """As docs/practice.md and practice-reference.md say: all three recover (the practice page
    said the regex and stream ones did not), the schema one a round sooner, its error naming
    both problems at once."""
    served = start_serve("--faults", "wrong_param")
    requests = {}
    try:
        for strategy in ("regex", "stream", "schema"):
            before = served.log.count("POST /v1/chat/completions 200")
            program = ejected(strategy, tmp_path)
            done = run_ejected(program, "What's the weather in Beijing?", served)
            assert done.returncode == 0 and "8°C" in done.stdout, done.stderr
            log = served.wait_for_next("8°C")
            requests[strategy] = log.count("POST /v1/chat/completions 200") - before
    finally:
        served.stop()
    assert requests["schema"] < min(requests["regex"], requests["stream"]), requests


@pytest.mark.parametrize("strategy", list(PROGRAMS))
def test_an_ejected_program_is_short_standalone_and_never_evals(strategy: str) -> None:
    printed = toolcall("eject", "--strategy", strategy, cwd=Path.cwd())
    assert printed.returncode == 0
    source = printed.stdout
    assert len(source.splitlines()) <= 90
    tree = ast.parse(source)
    imported = {
        alias.name.split(".")[0]
        for n in ast.walk(tree)
        if isinstance(n, ast.Import)
        for alias in n.names
    }
    imported |= {
        n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
    }
    assert imported - set(sys.stdlib_module_names) == {"httpx"}
    called = {
        n.func.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    }
    assert not called & {"eval", "exec", "compile"}
    assert 'if __name__ == "__main__":' in source


def test_eject_never_writes_over_a_file(tmp_path: Path) -> None:
    mine = tmp_path / "loop.py"
    mine.write_text("my own loop\n", encoding="utf-8")
    done = toolcall("eject", "--strategy", "schema", "--output", str(mine), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("toolcall: error: ") and "already exists" in done.stderr
    assert mine.read_text(encoding="utf-8") == "my own loop\n"


# --- the openai client ---------------------------------------------------------------------------


def finish_tool_round(sdk: openai.OpenAI, first: dict[str, Any], *, stream: bool) -> str:
    """Send the call's result back by its id, as a loop does, and return the answer."""
    messages = [
        *QUESTION,
        first,
        {
            "role": "tool",
            "tool_call_id": first["tool_calls"][0]["id"],
            "content": '{"city": "Beijing", "condition": "sunny", "temp_c": 8}',
        },
    ]
    if not stream:
        reply = sdk.chat.completions.create(model="gpt-4o", messages=messages, tools=[WEATHER_TOOL])
        return reply.choices[0].message.content or ""
    chunks = sdk.chat.completions.create(
        model="gpt-4o", messages=messages, tools=[WEATHER_TOOL], stream=True
    )
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


def streamed_message(sdk: openai.OpenAI, **extra: Any) -> tuple[Any, str | None]:
    """One streamed reply assembled as a client must: text pieces joined, tool-call deltas
    joined by index; with its finish_reason."""
    content, calls, finish = "", dict[int, dict[str, Any]](), None
    asked: Any = {"messages": QUESTION, "tools": [WEATHER_TOOL], **extra}
    chunks = sdk.chat.completions.create(model="gpt-4o", stream=True, **asked)
    for chunk in chunks:
        for choice in chunk.choices:
            content += choice.delta.content or ""
            finish = choice.finish_reason or finish
            for part in choice.delta.tool_calls or []:
                call = calls.setdefault(
                    part.index,
                    {"id": "", "type": "function", "function": {"name": "", "arguments": ""}},
                )
                call["id"] = part.id or call["id"]
                if part.function:
                    call["function"]["name"] += part.function.name or ""
                    call["function"]["arguments"] += part.function.arguments or ""
    message = {"role": "assistant", "content": content or None, "tool_calls": list(calls.values())}
    return message, finish


def test_the_openai_client_completes_a_tool_call(serve: Served, client: Client) -> None:
    sdk = client(serve)
    reply = sdk.chat.completions.create(model="gpt-4o", messages=QUESTION, tools=[WEATHER_TOOL])
    message = reply.choices[0].message
    assert reply.choices[0].finish_reason == "tool_calls" and message.tool_calls
    call: Any = message.tool_calls[0]
    assert call.type == "function"
    assert (call.function.name, json.loads(call.function.arguments)) == (
        "get_weather",
        {"city": "Beijing"},
    )
    answer = finish_tool_round(sdk, message.model_dump(exclude_none=True), stream=False)
    assert "8°C" in answer
    log = serve.wait_for(answer)
    assert "user: What's the weather in Beijing?" in log
    assert re.search(r"│ tools get_weather +│", log)  # no tool_choice was sent
    assert f'→ call get_weather {{"city": "Beijing"}}  {call.id}' in log


def test_the_openai_client_completes_a_streamed_tool_call(serve: Served, client: Client) -> None:
    sdk = client(serve)
    message, finish = streamed_message(sdk, stream_options={"include_usage": True})
    assert finish == "tool_calls"
    [call] = message["tool_calls"]
    assert call["id"].startswith("call_")
    assert (call["function"]["name"], json.loads(call["function"]["arguments"])) == (
        "get_weather",
        {"city": "Beijing"},
    )
    answer = finish_tool_round(sdk, message, stream=True)
    assert "8°C" in answer
    # The answer is the one the unstreamed round gave too: its panel may have been read already.
    log = serve.wait_for_next(answer)
    assert "streamed" in log[log.rindex("#") :]


def test_with_faults_on_the_client_still_gets_a_well_formed_reply_showing_them(
    faulty: Served, client: Client
) -> None:
    sdk = client(faulty)
    raw = sdk.chat.completions.with_raw_response.create(
        model="gpt-4o", messages=QUESTION, tools=[WEATHER_TOOL]
    )
    assert set(raw.headers["x-toolcall-faults"].split(",")) == {"unknown_tool", "single_quotes"}
    calls: Any = raw.parse().choices[0].message.tool_calls
    call = calls[0]  # the SDK read it: well-formed
    assert call.function.name != "get_weather"  # a tool nobody offered
    with pytest.raises(json.JSONDecodeError):  # arguments written with single quotes
        json.loads(call.function.arguments)
    assert "'city'" in call.function.arguments
    log = faulty.wait_for("⚠ fault single_quotes")  # the last line of the exchange's block
    assert call.id in log and "⚠ fault unknown_tool" in log


def test_with_faults_on_a_stream_is_well_formed_too(faulty: Served, client: Client) -> None:
    message, finish = streamed_message(client(faulty))
    assert finish == "tool_calls"
    [call] = message["tool_calls"]
    assert call["function"]["name"] not in ("", "get_weather")
    assert call["function"]["arguments"].startswith("{'")
    # The loop goes on: the mistake is answered by its id, and the model corrects itself.
    fixed = client(faulty).chat.completions.create(
        model="gpt-4o",
        messages=[
            *QUESTION,
            message,
            {
                "role": "tool",
                "tool_call_id": call["id"],
                "content": "error: unknown tool; available tools: get_weather",
            },
        ],
        tools=[WEATHER_TOOL],
    )
    again: Any = fixed.choices[0].message.tool_calls
    assert again and again[0].function.name == "get_weather"


def test_v1_models_lists_the_served_model(serve: Served, client: Client) -> None:
    sdk = client(serve)
    assert [model.id for model in sdk.models.list()] == ["toolcall-offline"]
    assert sdk.models.retrieve("toolcall-offline").owned_by == "toolcall"
    with pytest.raises(openai.NotFoundError):
        sdk.models.retrieve("gpt-4o")


# --- what the server does with a request ---------------------------------------------------------


def post(served: Served, body: Any, path: str = "/chat/completions") -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(served.url + path, content=content, timeout=WAIT)


@pytest.mark.parametrize(
    ("body", "param", "says"),
    [
        (b"{not json", None, "could not parse the JSON body"),
        ([1, 2], None, "must be a JSON object"),
        ({"messages": QUESTION}, "model", "you must provide a model"),
        ({"model": "m"}, "messages", "Missing required parameter: 'messages'"),
        (
            {"model": "m", "messages": [{"role": "robot", "content": "hi"}]},
            "messages[0].role",
            "Invalid value: 'robot'",
        ),
        (
            {
                "model": "m",
                "messages": [
                    *QUESTION,
                    {"role": "tool", "tool_call_id": "call_x", "content": "8°C"},
                ],
            },
            "messages[1].tool_call_id",
            "must be a response to a preceding",
        ),
        (
            {
                "model": "m",
                "messages": [
                    *QUESTION,
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "get_weather", "arguments": "{}"},
                            }
                        ],
                    },
                    {"role": "user", "content": "and?"},
                ],
            },
            "messages[2]",
            "did not have response messages: call_1",
        ),
        (
            {
                "model": "m",
                "messages": [
                    *QUESTION,
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "c",
                                "type": "function",
                                "function": {
                                    "name": "get_weather",
                                    "arguments": {"city": "Beijing"},
                                },
                            }
                        ],
                    },
                ],
            },
            "messages[1].tool_calls[0].function.arguments",
            "must be a string",
        ),
        (
            {"model": "m", "messages": QUESTION, "tool_choice": "auto"},
            "tool_choice",
            "only allowed when 'tools' are specified",
        ),
        (
            {
                "model": "m",
                "messages": QUESTION,
                "tools": [{"type": "function", "function": {"name": "get weather"}}],
            },
            "tools[0].function.name",
            "must match",
        ),
        (
            {"model": "m", "messages": QUESTION, "response_format": {"type": "yaml"}},
            "response_format.type",
            "must be one of",
        ),
        (
            {"model": "m", "messages": QUESTION, "stream_options": {"include_usage": True}},
            "stream_options",
            "only allowed when 'stream' is enabled",
        ),
    ],
)
def test_a_bad_request_gets_openais_error_shape_and_a_400(
    serve: Served, body: Any, param: str | None, says: str
) -> None:
    answer = post(serve, body)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == param
    assert says in error["message"]
    assert f"400 {error['message'][:40]}" in serve.wait_for(error["message"][:40])


def test_the_sdk_raises_the_servers_message_for_a_bad_request(
    serve: Served, client: Client
) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        client(serve).chat.completions.create(
            model="gpt-4o",
            messages=[*QUESTION, {"role": "tool", "tool_call_id": "call_9", "content": "8"}],
        )
    assert "must be a response to a preceding message with 'tool_calls'" in str(raised.value)


def test_an_unknown_path_is_404_and_a_wrong_method_405(serve: Served) -> None:
    missing = post(serve, {}, path="/completion")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "unknown_url"
    wrong = httpx.get(serve.url + "/chat/completions", timeout=WAIT)
    assert wrong.status_code == 405 and wrong.headers["allow"] == "POST"
    assert wrong.json()["error"]["message"] == "GET is not allowed here; use POST"
    assert "? #" in serve.wait_for("GET /v1/chat/completions 405")


def test_one_openai_client_goes_on_after_an_unknown_path_and_a_wrong_method(
    serve: Served,
) -> None:
    """The refused requests' bodies are read, so the same keep-alive connection carries the
    next request: one TCP connection for all four, each answered as asked."""
    connections: list[str] = []

    def traced(request: Any) -> None:
        def trace(name: str, info: Any) -> None:
            if name == "connection.connect_tcp.started":
                connections.append(name)

        request.extensions["trace"] = trace

    with openai.DefaultHttpxClient(event_hooks={"request": [traced]}) as http:
        sdk = openai.OpenAI(
            base_url=serve.url, api_key="practice", max_retries=0, timeout=WAIT, http_client=http
        )
        with pytest.raises(openai.NotFoundError):  # Ollama's path, as `--base-url` asks it
            sdk.post("/api/show", body={"model": "toolcall-offline"}, cast_to=object)
        first = sdk.chat.completions.create(model="m", messages=QUESTION, tools=[WEATHER_TOOL])
        with pytest.raises(openai.APIStatusError) as wrong:  # POST with a body where GET goes
            sdk.post("/models", body={"model": "m" * 5000}, cast_to=object)
        again = sdk.chat.completions.create(model="m", messages=QUESTION, tools=[WEATHER_TOOL])
    assert wrong.value.status_code == 405
    for completion in (first, again):
        calls: Any = completion.choices[0].message.tool_calls
        assert calls and calls[0].function.name == "get_weather"
    assert len(connections) == 1, connections
    log = serve.wait_for_next("POST /v1/models 405")
    assert "Bad request" not in log
    assert "405" in serve.statuses and "501" not in serve.statuses


def test_what_http_server_refuses_itself_is_a_json_error_too(serve: Served) -> None:
    port = int(serve.url.rsplit(":", 1)[1].split("/")[0])
    with socket.create_connection(("127.0.0.1", port), timeout=WAIT) as connection:
        header = b"X-Long: " + b"a" * 70_000  # past http.server's 64 KiB for a header line
        connection.sendall(b"GET /v1/models HTTP/1.1\r\n" + header + b"\r\n\r\n")
        answer = b""
        while chunk := connection.recv(4096):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 431 ") and b"Content-Type: application/json" in head
    assert json.loads(body)["error"]["message"] == "Line too long"
    assert "GET /v1/models 431 Line too long" in serve.wait_for("431 Line too long")


CLOCK_TOOL: Any = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Get the current time (时间) in a time zone or city.",
        "parameters": {"type": "object", "properties": {"timezone": {"type": "string"}}},
    },
}
TWO_CITIES: Any = [{"role": "user", "content": "What's the weather in Beijing and in Paris?"}]
GREETING: Any = [{"role": "user", "content": "Hello! Who are you?"}]


def names(message: Any) -> list[str]:
    return [call.function.name for call in message.tool_calls or []]


def test_tool_choice_none_gets_no_call_where_auto_calls(serve: Served, client: Client) -> None:
    sdk, tools = client(serve), [WEATHER_TOOL, CLOCK_TOOL]
    auto = sdk.chat.completions.create(model="m", messages=QUESTION, tools=tools).choices[0]
    assert names(auto.message) == ["get_weather"]
    reply = sdk.chat.completions.create(
        model="m", messages=QUESTION, tools=tools, tool_choice="none"
    ).choices[0]
    assert (reply.finish_reason, reply.message.tool_calls) == ("stop", None)
    assert reply.message.content
    assert "tool_choice none: no call" in serve.wait_for("tool_choice none:")


def test_tool_choice_required_calls_where_the_model_would_have_answered(
    serve: Served, client: Client
) -> None:
    sdk, tools = client(serve), [WEATHER_TOOL, CLOCK_TOOL]
    auto = sdk.chat.completions.create(model="m", messages=GREETING, tools=tools).choices[0]
    assert auto.finish_reason == "stop" and not auto.message.tool_calls
    required = sdk.chat.completions.create(
        model="m", messages=GREETING, tools=tools, tool_choice="required"
    ).choices[0]
    assert required.finish_reason == "tool_calls" and len(names(required.message)) == 1
    assert names(required.message)[0] in ("get_weather", "get_time")


def test_a_named_tool_choice_gets_a_call_to_that_tool_only(serve: Served, client: Client) -> None:
    """Asked about the weather, but made to call get_time: a call to it, filled from the
    question as well as the model can; and get_weather when the question has no tool at all."""
    sdk, tools = client(serve), [WEATHER_TOOL, CLOCK_TOOL]
    for question, name in ((QUESTION, "get_time"), (GREETING, "get_weather")):
        chosen: Any = {"type": "function", "function": {"name": name}}
        reply = sdk.chat.completions.create(
            model="m", messages=question, tools=tools, tool_choice=chosen
        ).choices[0]
        assert (reply.finish_reason, names(reply.message)) == ("tool_calls", [name])
    assert "tool_choice get_time: a call to it" in serve.wait_for("get_time: a call to it")


def test_parallel_tool_calls_false_gets_one_call_at_most(serve: Served, client: Client) -> None:
    sdk = client(serve)
    both = sdk.chat.completions.create(model="m", messages=TWO_CITIES, tools=[WEATHER_TOOL])
    made: Any = both.choices[0].message.tool_calls
    assert [json.loads(c.function.arguments)["city"] for c in made] == ["Beijing", "Paris"]
    one = sdk.chat.completions.create(
        model="m", messages=TWO_CITIES, tools=[WEATHER_TOOL], parallel_tool_calls=False
    ).choices[0]
    calls: Any = one.message.tool_calls
    assert len(calls) == 1
    assert (one.finish_reason, json.loads(calls[0].function.arguments)) == (
        "tool_calls",
        {"city": "Beijing"},
    )
    message, _ = streamed_message(sdk, messages=TWO_CITIES, parallel_tool_calls=False)
    assert len(message["tool_calls"]) == 1
    assert "parallel_tool_calls false" in serve.wait_for("parallel_tool_calls false")


@pytest.mark.parametrize("limit", ["max_tokens", "max_completion_tokens"])
def test_max_tokens_cuts_the_reply_with_finish_reason_length(
    serve: Served, client: Client, limit: str
) -> None:
    """Where a server stops writing: the text, or a call's arguments, cut short (a prefix of
    the whole reply), and finish_reason "length", streamed or not."""
    sdk, bound, room = client(serve), dict[str, Any]({limit: 5}), dict[str, Any]({limit: 4096})
    whole = sdk.chat.completions.create(model="m", messages=GREETING).choices[0].message.content
    assert whole and len(whole) > 20  # 5 tokens: 20 characters, as the usage counts them
    cut = sdk.chat.completions.create(model="m", messages=GREETING, **bound).choices[0]
    assert cut.finish_reason == "length"
    assert cut.message.content and whole.startswith(cut.message.content)
    assert len(cut.message.content) < len(whole)
    call = sdk.chat.completions.create(
        model="m", messages=QUESTION, tools=[WEATHER_TOOL], **bound
    ).choices[0]
    [made] = call.message.tool_calls or []
    assert call.finish_reason == "length" and made.function.name == "get_weather"
    assert '{"city": "Beijing"}'.startswith(made.function.arguments)
    assert made.function.arguments != '{"city": "Beijing"}'
    message, finish = streamed_message(sdk, **bound)
    assert finish == "length"
    assert message["tool_calls"][0]["function"]["arguments"] == made.function.arguments
    roomy = sdk.chat.completions.create(model="m", messages=GREETING, **room).choices[0]
    assert (roomy.finish_reason, roomy.message.content) == ("stop", whole)


def test_response_format_json_gets_a_json_reply(serve: Served) -> None:
    body = {"model": "m", "messages": QUESTION, "response_format": {"type": "json_object"}}
    reply = post(serve, body).json()["choices"][0]["message"]["content"]
    assert isinstance(json.loads(reply), dict)


def test_toolcall_run_can_use_serve_as_its_endpoint(serve: Served, tmp_path: Path) -> None:
    done = toolcall(
        "run",
        "--base-url",
        serve.url,
        "--model",
        "toolcall-offline",
        "--strategy",
        "schema",
        "--quiet",
        "--no-trace",
        "What's 12*5+3?",
        cwd=tmp_path,
    )
    assert (done.returncode, done.stdout) == (0, "12*5+3 = 63\n"), done.stderr
    # its probe of Ollama's /api/show is refused, and the requests after it are answered
    log = serve.wait_for_next("POST /api/show 404")
    assert "Bad request syntax" not in log
    assert "404" in serve.statuses and "501" not in serve.statuses


# --- starting and stopping ----------------------------------------------------------------------


def test_ctrl_c_stops_it_cleanly_with_no_traceback() -> None:
    served = start_serve()
    code, out, err = served.stop()
    assert (code, err) == (0, "")
    assert out.rstrip().endswith("stopped (Ctrl-C)")


def test_sigterm_is_its_normal_stop_and_exits_0_where_sighup_keeps_129() -> None:
    """systemd, docker and kubernetes stop a server with SIGTERM: exit 143 counted as a
    failure there. A closed terminal (SIGHUP) is not a stop asked for."""
    code, out, err = start_serve().stop(signal.SIGTERM)
    assert (code, err) == (0, "")
    assert out.rstrip().endswith("stopped (SIGTERM)")
    code, out, err = start_serve().stop(signal.SIGHUP)
    assert (code, err) == (129, "toolcall: terminated\n")


def test_it_stops_when_the_reader_of_its_log_goes_away() -> None:
    command = [sys.executable, "-m", "toolcall_cli", "serve", "--port", "0"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        assert process.stdout is not None and process.stderr is not None
        url = None
        while url is None:
            found = URL_RE.search(process.stdout.readline().decode())
            url = found.group(0) if found else None
        process.stdout.close()  # as `toolcall serve | head -2` does once it has its lines
        assert httpx.get(url + "/models", timeout=WAIT).status_code == 200
        assert process.wait(timeout=WAIT) == 141  # its line for that exchange failed to write
        assert process.stderr.read() == b""


def test_listening_beyond_this_machine_is_said_out_loud() -> None:
    assert host_note("127.0.0.1") == host_note("::1") == host_note("localhost") == ""
    assert "anyone who can reach it can use it" in host_note("0.0.0.0")


def test_an_unknown_fault_and_a_taken_port_are_one_line_each(tmp_path: Path) -> None:
    done = toolcall("serve", "--faults", "single_quote", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("toolcall: error: unknown fault 'single_quote'")
    assert done.stderr.count("\n") == 1
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = toolcall("serve", "--port", str(port), cwd=tmp_path)
    assert done.returncode == 1
    assert (
        done.stderr
        == f"toolcall: error: cannot listen on 127.0.0.1:{port}: Address already in use\n"
    )
