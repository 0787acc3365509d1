"""The battery of kata request: `tool_schema(func)` on functions typed as real tools are, judged
by what its schema accepts and refuses (any schema that draws the same line passes), and
`build_request(question, tools, history)`, judged against the chat-completions request shape
(chat_request.schema.json) and then by `toolcall serve` itself, started here on 127.0.0.1: a
body passes when an OpenAI-compatible server answers it."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import httpx
from jsonschema import Draft202012Validator  # type: ignore[import-untyped, unused-ignore]
from jsonschema.exceptions import (  # type: ignore[import-untyped, unused-ignore]
    SchemaError,
    best_match,
)

from toolcall_cli.kata._battery import Battery, Case, Solution, Verdict, shown
from toolcall_cli.kata._samples import named
from toolcall_cli.models import Deadline, read_body, send_streamed
from toolcall_cli.wire import ModelError

SCHEMA_FILE = "chat_request.schema.json"


@cache
def request_shape() -> Draft202012Validator:
    """The chat-completions request shape, as JSON Schema (shipped beside this module)."""
    text = resources.files("toolcall_cli.kata").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    return Draft202012Validator(json.loads(text))


def shape_problem(value: Any, where: str = "") -> str | None:
    """The first way `value` (the body, or a part of it at `where`) breaks the request shape."""
    validator = request_shape()
    if where:
        validator = validator.evolve(schema={"$ref": where})
    error = best_match(validator.iter_errors(value))
    if error is None:
        return None
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return f"{path.lstrip('.') or 'the body'}: {error.message}"


# --- tool_schema -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    """A sample function, and what a right schema of it does."""

    name: str
    summary: str
    described: dict[str, str]
    """Each parameter's `Args:` text."""
    defaults: dict[str, Any]
    required: tuple[str, ...]
    accepts: tuple[dict[str, Any], ...]
    refuses: tuple[tuple[str, dict[str, Any]], ...]
    """Arguments a right schema refuses, each with why."""


SAMPLES: tuple[Sample, ...] = (
    Sample(
        "get_weather",
        "Get the weather forecast for a city.",
        {"city": "The city's name, e.g. Paris or 北京.", "day": "Which day's forecast."},
        {"day": "today"},
        ("city",),
        ({"city": "Paris"}, {"city": "北京", "day": "tomorrow"}),
        (
            ("city left out", {}),
            ("city not a string", {"city": 3}),
            ("day not one of the Literal's values", {"city": "Paris", "day": "yesterday"}),
            ("an argument it does not take", {"city": "Paris", "country": "FR"}),
        ),
    ),
    Sample(
        "search_flights",
        "Find flights between two airports.",
        {
            "origin": "IATA code of the airport to leave from.",
            "destination": "IATA code of the airport to fly to.",
            "max_stops": "The most stops allowed; leave it out for any number.",
            "cabin": "The cabin class.",
        },
        {"max_stops": None, "cabin": "economy"},
        ("origin", "destination"),
        (
            {"origin": "OSL", "destination": "NRT"},
            {"origin": "OSL", "destination": "NRT", "max_stops": 1, "cabin": "business"},
            {"origin": "OSL", "destination": "NRT", "max_stops": None},
        ),
        (
            ("destination left out", {"origin": "OSL"}),
            ("max_stops not an integer", {"origin": "OSL", "destination": "NRT", "max_stops": 1.5}),
            ("max_stops a string", {"origin": "OSL", "destination": "NRT", "max_stops": "one"}),
            ("cabin not allowed", {"origin": "OSL", "destination": "NRT", "cabin": "first"}),
        ),
    ),
    Sample(
        "average",
        "Average a list of whole numbers.",
        {"values": "The numbers to average.", "precision": "Digits kept after the decimal point."},
        {"precision": 2},
        ("values",),
        ({"values": [1, 2, 3]}, {"values": [], "precision": 0}),
        (
            ("an item that is not an integer", {"values": [1.5]}),
            ("a boolean item (JSON's true is no integer)", {"values": [True]}),
            ("values as a string", {"values": "1,2"}),
            ("precision as a string", {"values": [1], "precision": "2"}),
        ),
    ),
    Sample(
        "set_alarm",
        "Set an alarm on the user's phone.",
        {
            "hour": "The hour, 0 to 23.",
            "minute": "The minute, 0 to 59.",
            "label": "Text shown when it rings.",
            "repeat": "Ring every day.",
        },
        {"minute": 0, "label": None, "repeat": False},
        ("hour",),
        (
            {"hour": 7},
            {"hour": 7, "minute": 30, "label": "wake up", "repeat": True},
            {"hour": 7, "label": None},
        ),
        (
            ("hour left out", {"minute": 3}),
            ("hour as a string", {"hour": "7"}),
            ("repeat not a boolean", {"hour": 7, "repeat": "yes"}),
            ("label not a string", {"hour": 7, "label": 5}),
        ),
    ),
    Sample(
        "current_time",
        "The current time, in ISO 8601.",
        {},
        {},
        (),
        ({},),
        (("an argument it does not take", {"tz": "UTC"}),),
    ),
    Sample(
        "convert_units",
        "Convert a distance from one unit to another.",
        {
            "value": "The distance to convert.",
            "from_unit": "The unit it is in.",
            "to_unit": "The unit wanted.",
            "tags": "Words to file the result under.",
        },
        {"tags": None},
        ("value", "from_unit", "to_unit"),
        (
            {"value": 5, "from_unit": "km", "to_unit": "mi"},
            {"value": 5.5, "from_unit": "m", "to_unit": "km", "tags": ["run"]},
            {"value": 1, "from_unit": "mi", "to_unit": "m", "tags": None},
        ),
        (
            ("value as a string", {"value": "5", "from_unit": "km", "to_unit": "mi"}),
            ("a unit not allowed", {"value": 5, "from_unit": "ft", "to_unit": "mi"}),
            (
                "a tag that is not a string",
                {"value": 5, "from_unit": "km", "to_unit": "mi", "tags": [1]},
            ),
        ),
    ),
)


Judge = Callable[[Sample, dict[str, Any]], Verdict]


def schema_case(sample: Sample, aspect: str, judge: Judge) -> Case:
    def check(solution: Solution) -> Verdict:
        got = solution.call_on_samples("tool_schema", named(sample.name))
        return entry_problem(sample, got) or judge(sample, got["function"])

    return Case(aspect, "built-in", sample.name, check)


def entry_problem(sample: Sample, got: Any) -> Verdict | None:
    """The entry must be a "tools" item a server takes, named as the function is, and its
    parameters a JSON Schema object."""
    expected = f'a "tools" entry for {sample.name}'
    if not isinstance(got, dict):
        return Verdict(False, expected, f"not a dict: {shown(got)}")
    problem = shape_problem(got, "#/$defs/tool")
    if problem:
        return Verdict(False, expected, f"{problem.replace('the body', 'the entry')}: {shown(got)}")
    function = got["function"]
    if function.get("name") != sample.name:
        return Verdict(False, f"name {sample.name!r}", shown(function.get("name")))
    parameters = function.get("parameters")
    if not isinstance(parameters, dict) or parameters.get("type") != "object":
        return Verdict(False, 'parameters: a JSON Schema with "type": "object"', shown(parameters))
    try:
        Draft202012Validator.check_schema(parameters)
    except SchemaError as error:
        return Verdict(False, "parameters: a valid JSON Schema", f"{error.message}")
    return None


def types_line(sample: Sample, function: dict[str, Any]) -> Verdict:
    """Every right argument set is accepted, every wrong one refused."""
    validator = Draft202012Validator(function["parameters"])
    for arguments in sample.accepts:
        error = best_match(validator.iter_errors(arguments))
        if error is not None:
            return Verdict(False, f"accepts {shown(arguments)}", f"refused: {error.message}")
    for why, arguments in sample.refuses:
        if validator.is_valid(arguments):
            return Verdict(False, f"refuses {shown(arguments)} ({why})", "accepted")
    return Verdict(True)


def required_and_defaults(sample: Sample, function: dict[str, Any]) -> Verdict:
    parameters = function["parameters"]
    required = parameters.get("required") or []
    if sorted(required) != sorted(sample.required):
        return Verdict(False, f"required: {shown(sorted(sample.required))}", shown(required))
    properties = parameters.get("properties") or {}
    for name, default in sample.defaults.items():
        said = properties.get(name) if isinstance(properties, dict) else None
        if not isinstance(said, dict) or "default" not in said or said["default"] != default:
            got = said.get("default", "no default") if isinstance(said, dict) else "no property"
            return Verdict(False, f"{name}: default {shown(default)}", shown(got))
    return Verdict(True)


def descriptions(sample: Sample, function: dict[str, Any]) -> Verdict:
    if sample.summary not in str(function.get("description") or ""):
        return Verdict(
            False, f"description: {shown(sample.summary)}", shown(function.get("description"))
        )
    properties = function["parameters"].get("properties") or {}
    for name, text in sample.described.items():
        schema = properties.get(name) if isinstance(properties, dict) else None
        found = schema.get("description") if isinstance(schema, dict) else None
        if not isinstance(found, str) or text not in found:
            return Verdict(False, f"{name}: description {shown(text)}", shown(found))
    return Verdict(True)


def schema_cases() -> list[Case]:
    return [
        schema_case(sample, aspect, judge)
        for aspect, judge in (
            ("types", types_line),
            ("required and defaults", required_and_defaults),
            ("descriptions", descriptions),
        )
        for sample in SAMPLES
    ]


# --- build_request ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Body:
    """One build_request case: the question, the tools, the history, and its category."""

    category: str
    name: str
    question: str
    tools: tuple[str, ...]
    history: tuple[dict[str, Any], ...] = ()


def call(id: str, name: str, arguments: dict[str, Any], result: Any) -> dict[str, Any]:
    return {"id": id, "name": name, "arguments": arguments, "result": result}


WEATHER_PARIS = call("call_1", "get_weather", {"city": "Paris"}, '{"city": "Paris", "high": 21}')
TWO_CITIES = {
    "question": "北京和上海今天天气怎么样？",
    "rounds": [
        [
            call("call_a", "get_weather", {"city": "北京"}, '{"city": "北京", "high": 8}'),
            call("call_b", "get_weather", {"city": "上海"}, '{"city": "上海", "high": 15}'),
        ]
    ],
    "answer": "北京 8°C，上海 15°C。",
}

BODIES: tuple[Body, ...] = (
    Body("first request", "one tool, no history", "What's the weather in Paris?", ("get_weather",)),
    Body(
        "first request",
        "several tools",
        "Find me a flight from OSL to NRT, and set an alarm for 7.",
        ("search_flights", "set_alarm", "current_time"),
    ),
    Body(
        "history",
        "after one call and its answer",
        "And tomorrow?",
        ("get_weather",),
        (
            {
                "question": "What's the weather in Paris?",
                "rounds": [[WEATHER_PARIS]],
                "answer": "21 °C in Paris.",
            },
        ),
    ),
    Body(
        "history",
        "parallel calls to the same tool, each result by its id",
        "哪个更暖和？",
        ("get_weather",),
        (TWO_CITIES,),
    ),
    Body(
        "history",
        "two rounds, the first call failed",
        "Thanks. And in miles?",
        ("convert_units",),
        (
            {
                "question": "Convert 5 km to miles",
                "rounds": [
                    [
                        call(
                            "call_x",
                            "convert_units",
                            {"value": "5", "from_unit": "km"},
                            "error: to_unit is required; value must be a number",
                        )
                    ],
                    [
                        call(
                            "call_y",
                            "convert_units",
                            {"value": 5, "from_unit": "km", "to_unit": "mi"},
                            "3.107",
                        )
                    ],
                ],
                "answer": "5 km is about 3.1 miles.",
            },
        ),
    ),
    Body(
        "history",
        "a question answered without tools, then one with",
        "What time is it?",
        ("current_time", "get_weather"),
        ({"question": "Hello! Who are you?", "rounds": [], "answer": "I am an assistant."},),
    ),
)


def expected_messages(body: Body) -> list[dict[str, Any]]:
    """The conversation the body must carry, as the model reads it (see as_read)."""
    messages: list[dict[str, Any]] = []
    for turn in body.history:
        messages.append({"role": "user", "content": turn["question"]})
        for calls in turn["rounds"]:
            messages.append(
                {
                    "role": "assistant",
                    "content": "",
                    "calls": [[c["id"], c["name"], c["arguments"]] for c in calls],
                }
            )
            messages += [
                {"role": "tool", "tool_call_id": c["id"], "content": c["result"]} for c in calls
            ]
        messages.append({"role": "assistant", "content": turn["answer"], "calls": []})
    messages.append({"role": "user", "content": body.question})
    return messages


def as_read(message: Any) -> Any:
    """A message as the model reads it: an assistant's calls by id, name and decoded arguments
    (null content and "" are the same: no text); the system message aside."""
    if not isinstance(message, dict):
        return message
    if message.get("role") == "assistant":
        calls = []
        for c in message.get("tool_calls") or []:
            function = c.get("function") or {} if isinstance(c, dict) else {}
            try:
                arguments = json.loads(str(function.get("arguments")))
            except (TypeError, ValueError):
                arguments = function.get("arguments")
            call_id = c.get("id") if isinstance(c, dict) else c
            calls.append([call_id, function.get("name"), arguments])
        return {"role": "assistant", "content": message.get("content") or "", "calls": calls}
    return {k: message[k] for k in ("role", "content", "tool_call_id") if k in message}


def body_case(body: Body) -> Case:
    def check(solution: Solution) -> Verdict:
        tools = [named(name) for name in body.tools]
        got = solution.call_on_samples("build_request", body.question, tools, list(body.history))
        return judge_body(body, got) or served(got)

    return Case(body.category, "built-in", body.name, check)


def judge_body(body: Body, got: Any) -> Verdict | None:
    if not isinstance(got, dict):
        return Verdict(False, "a dict: the request body", shown(got))
    problem = shape_problem(got)
    if problem:
        return Verdict(False, "a body of the chat-completions request shape", problem)
    names = [t["function"]["name"] for t in got.get("tools") or []]
    if names != list(body.tools):
        return Verdict(False, f"tools: {shown(list(body.tools))}, in order", shown(names))
    if got.get("tool_choice") != "auto":
        return Verdict(False, 'tool_choice: "auto"', shown(got.get("tool_choice", "left out")))
    sent = [as_read(m) for m in got["messages"] if m.get("role") not in ("system", "developer")]
    wanted = expected_messages(body)
    for n, (expected, message) in enumerate(zip(wanted, sent, strict=False)):
        if expected != message:
            return Verdict(False, f"message {n + 1}: {shown(expected)}", shown(message))
    if len(sent) != len(wanted):
        return Verdict(False, f"{len(wanted)} messages (besides a system one)", f"{len(sent)}")
    return None


SERVE_SECONDS = 30.0
"""How long the grader waits for its own server's answer to one body."""
SERVE_ANSWER_BYTES = 1024 * 1024
"""Most of the server's answer read: a chat completion of the offline model, or its error."""


def served(got: dict[str, Any]) -> Verdict:
    """What `toolcall serve` says to the body: a chat completion, or its error."""
    try:
        status, body = post_to_serve(f"{serve_url()}/chat/completions", got)
    except (httpx.HTTPError, ModelError) as error:
        return Verdict(False, "an answer from toolcall serve", f"no answer: {error}")
    if status == 200:
        return Verdict(True)
    try:
        message = json.loads(body)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        message = body.decode("utf-8", "replace")
    return Verdict(False, "toolcall serve answers it (200)", f"{status}: {message}")


def post_to_serve(url: str, body: dict[str, Any]) -> tuple[int, bytes]:
    """The status and body of the answer, sent and read as every request of toolcall's is."""
    deadline = Deadline.after(SERVE_SECONDS)
    with httpx.Client() as client:
        response = send_streamed(
            client, client.build_request("POST", url, json=body), deadline.remaining()
        )
        if response is None:
            raise deadline.error()
        with contextlib.closing(response):
            answer = read_body(
                response,
                max_bytes=SERVE_ANSWER_BYTES,
                deadline=deadline,
                read_timeout=SERVE_SECONDS,
            )
        return response.status_code, answer


@cache
def serve_url() -> str:
    """`toolcall serve` in a thread of the judge, on 127.0.0.1, started at its first use."""
    from toolcall_cli.serve import Answerer, ServeServer, ServeSettings

    server = ServeServer(("127.0.0.1", 0), Answerer(ServeSettings()), lambda exchange: None)
    threading.Thread(target=server.serve_forever, daemon=True, name="serve").start()
    return server.url


def battery(conformance: Path | None) -> Battery:
    cases: Sequence[Case] = [*schema_cases(), *(body_case(b) for b in BODIES)]
    return Battery(
        tuple(cases),
        "none used: a request is judged by the request shape and by toolcall serve",
        "offline faults: none (a request is what the program writes before any model speaks)",
    )
