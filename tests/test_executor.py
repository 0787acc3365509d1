"""The executor: every way a call can be wrong becomes an error result the model can act on."""

from __future__ import annotations

import difflib
import threading
import time
from collections.abc import Iterator
from typing import Any, Literal

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from toolcall_cli import tool
from toolcall_cli.messages import ToolCall, ToolSpec
from toolcall_cli.tools.executor import plainly_valid
from toolcall_cli.tools.pool import execute
from toolcall_cli.tools.registry import Tool, ToolRegistry
from toolcall_cli.tools.validation import schema_problem
from toolcall_cli.tools.validation import validator as _validator_of

_release = threading.Event()


@tool
def get_weather(city: str, day: Literal["today", "tomorrow"] = "today") -> dict[str, Any]:
    """Weather for a city."""
    if city == "Atlantis":
        raise ValueError("unknown city 'Atlantis'. Use a real city, e.g. Paris.")
    return {"city": city, "day": day, "temp_c": 21}


@tool
def get_time(timezone: str = "UTC") -> str:
    return f"12:00 {timezone}"


@tool
def add(n: int, m: int = 1, tags: list[str] | None = None) -> int:
    return n + m


@tool
def echo(value: str) -> Any:
    """Returns a value of the kind named by `value`."""
    results: dict[str, Any] = {
        "none": None,
        "number": 3.5,
        "list": [1, "二"],
        "text": "plain text, not JSON",
        "bool": True,
        "set": {1},
    }
    return results[value]


@tool
def explode() -> None:
    raise RuntimeError("disk on fire\nsecond line of the message")


@tool
def quit_now() -> None:
    raise SystemExit(2)


@tool(timeout=0.2)
def slow() -> str:
    _release.wait(30)
    return "finally"


@tool
def no_args() -> str:
    return "ok"


@pytest.fixture(scope="module")
def registry() -> Iterator[ToolRegistry]:
    yield ToolRegistry.from_functions(
        get_weather, get_time, add, echo, explode, quit_now, slow, no_args
    )
    _release.set()  # let abandoned slow() threads finish


def call(name: str, arguments: Any = None) -> ToolCall:
    return ToolCall(id="call_1", name=name, arguments=arguments)


def test_success_returns_json_text(registry: ToolRegistry) -> None:
    result = execute(call("get_weather", {"city": "北京"}), registry)
    assert result.ok
    assert result.error_kind is None
    assert result.content == '{"city": "北京", "day": "today", "temp_c": 21}'
    assert (result.call_id, result.name) == ("call_1", "get_weather")
    assert result.duration > 0


@pytest.mark.parametrize(
    ("value", "content"),
    [
        ("none", "null"),
        ("number", "3.5"),
        ("list", '[1, "二"]'),
        ("text", "plain text, not JSON"),
        ("bool", "true"),
        ("set", "[1]"),  # a JSON list, never a Python set's text
    ],
)
def test_result_text_forms(registry: ToolRegistry, value: str, content: str) -> None:
    result = execute(call("echo", {"value": value}), registry)
    assert result.ok
    assert result.content == content


def test_none_arguments_mean_no_arguments(registry: ToolRegistry) -> None:
    assert execute(call("no_args", None), registry).content == "ok"
    assert execute(call("get_time", None), registry).content == "12:00 UTC"


@pytest.mark.parametrize(
    ("arguments", "kind"), [("北京", "string"), ([1], "array"), (3, "integer")]
)
def test_non_object_arguments_are_refused(
    registry: ToolRegistry, arguments: Any, kind: str
) -> None:
    result = execute(call("get_weather", arguments), registry)
    assert not result.ok
    assert result.error_kind == "invalid_arguments"
    assert result.content.startswith("Error: ")
    assert "arguments must be a JSON object" in result.content
    assert f"got {kind}" in result.content


def test_unknown_tool_lists_tools_closest_first(registry: ToolRegistry) -> None:
    result = execute(call("get_wether", {"city": "Paris"}), registry)
    assert not result.ok
    assert result.error_kind == "unknown_tool"
    assert result.content.startswith("Error: unknown tool `get_wether`.")
    assert "Did you mean `get_weather`?" in result.content
    listing = result.content.split("Available tools: ")[1].rstrip(".").split(", ")
    assert listing[0] == "get_weather"
    assert listing[1] == "get_time"
    assert sorted(listing) == sorted(registry.names())


def test_unknown_tool_with_no_close_match_still_lists_all(registry: ToolRegistry) -> None:
    result = execute(call("zzzz"), registry)
    assert "Did you mean" not in result.content
    assert all(name in result.content for name in registry.names())


def test_unknown_tool_with_empty_registry() -> None:
    result = execute(call("anything"), ToolRegistry())
    assert result.error_kind == "unknown_tool"
    assert "No tools are available" in result.content


def test_every_field_problem_is_reported_with_a_fix(registry: ToolRegistry) -> None:
    result = execute(call("get_weather", {"location": "Paris", "day": "Monday"}), registry)
    assert not result.ok
    assert result.error_kind == "invalid_arguments"
    lines = result.content.splitlines()
    assert lines[0] == "Error: invalid arguments for `get_weather`:"
    assert "- missing required argument `city` (string): add it" in lines
    assert any(
        line.startswith("- unexpected argument `location`: did you mean `city`? Rename it")
        and "`city`, `day`" in line
        for line in lines
    )
    assert '- `day` must be one of "today", "tomorrow"; got "Monday"' in lines
    assert lines[-1] == "Fix these and call `get_weather` again."


def test_wrong_types_are_named(registry: ToolRegistry) -> None:
    result = execute(call("add", {"n": "three", "m": True, "tags": ["a", {"x": 1}]}), registry)
    assert result.error_kind == "invalid_arguments"
    assert "- `n` should be integer, got string" in result.content
    assert "- `m` should be integer, got boolean" in result.content
    assert "`tags`" in result.content and "array of string or null" in result.content


def test_unexpected_argument_suggests_the_close_name(registry: ToolRegistry) -> None:
    result = execute(call("get_weather", {"city": "Paris", "dya": "today"}), registry)
    assert "unexpected argument `dya`: did you mean `day`? Rename it" in result.content


def test_tool_gets_only_validated_arguments(registry: ToolRegistry) -> None:
    result = execute(call("add", {"n": 2, "m": 5}), registry)
    assert result.ok
    assert result.content == "7"


def test_exception_becomes_type_and_message_without_traceback(registry: ToolRegistry) -> None:
    result = execute(call("get_weather", {"city": "Atlantis"}), registry)
    assert not result.ok
    assert result.error_kind == "tool_error"
    assert result.content == (
        "Error: ValueError: unknown city 'Atlantis'. Use a real city, e.g. Paris."
    )
    boom = execute(call("explode"), registry)
    assert boom.content == "Error: RuntimeError: disk on fire\nsecond line of the message"
    assert "Traceback" not in boom.content and 'File "' not in boom.content


def test_system_exit_in_a_tool_does_not_end_the_run(registry: ToolRegistry) -> None:
    result = execute(call("quit_now"), registry)
    assert result.error_kind == "tool_error"
    assert result.content == "Error: SystemExit: 2"


def test_timeout_returns_promptly(registry: ToolRegistry) -> None:
    started = time.perf_counter()
    result = execute(call("slow"), registry)
    elapsed = time.perf_counter() - started
    assert not result.ok
    assert result.error_kind == "timeout"
    assert result.content.startswith("Error: ")
    assert "timed out after 0.2 s" in result.content
    assert elapsed < 5  # the tool itself would wait 30 s


def test_default_timeout_applies_when_the_tool_has_none() -> None:
    gate = threading.Event()

    @tool
    def hang() -> None:
        gate.wait(30)

    try:
        result = execute(call("hang"), ToolRegistry.from_functions(hang), default_timeout=0.1)
    finally:
        gate.set()
    assert result.error_kind == "timeout"
    assert "timed out after 0.1 s" in result.content


def test_a_hung_tool_thread_is_a_daemon(registry: ToolRegistry) -> None:
    # A non-daemon thread would keep the process alive at exit after a timeout.
    execute(call("slow"), registry)
    hung = [t for t in threading.enumerate() if t.name == "tool:slow"]
    assert hung
    assert all(t.daemon for t in hung)


def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


class _Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text for you")


class _Hostile(Exception):
    """An exception whose message itself fails, even with an exception that ends threads."""

    def __str__(self) -> str:
        raise SystemExit(9)


def test_a_result_too_deep_or_unserialisable_is_an_error_naming_the_problem() -> None:
    @tool
    def deep() -> list[Any]:
        return _nested(100_000)

    @tool
    def odd() -> dict[str, Any]:
        return {"thing": _Unprintable()}

    @tool
    def circular() -> list[Any]:
        loop: list[Any] = []
        loop.append(loop)
        return loop

    registry = ToolRegistry.from_functions(deep, odd, circular)
    too_deep = execute(call("deep"), registry)
    assert (too_deep.ok, too_deep.error_kind) == (False, "tool_error")
    assert "nested too deeply" in too_deep.content and len(too_deep.content) < 300
    unprintable = execute(call("odd"), registry)
    assert unprintable.error_kind == "tool_error"
    assert "could not be turned into text" in unprintable.content
    assert "RuntimeError: no text for you" in unprintable.content
    assert "circular" in execute(call("circular"), registry).content.lower()


def test_an_exception_whose_message_fails_is_still_an_error_result() -> None:
    @tool
    def hostile() -> None:
        raise _Hostile()

    result = execute(call("hostile"), ToolRegistry.from_functions(hostile))
    assert (result.ok, result.error_kind) == (False, "tool_error")
    assert result.content.startswith("Error: _Hostile")


class _RecordingMatcher(difflib.SequenceMatcher[str]):
    """difflib's matcher, noting the longest text it was asked to compare."""

    longest = 0

    def set_seq1(self, a: Any) -> None:
        _RecordingMatcher.longest = max(_RecordingMatcher.longest, len(a))
        super().set_seq1(a)

    def set_seq2(self, b: Any) -> None:
        _RecordingMatcher.longest = max(_RecordingMatcher.longest, len(b))
        super().set_seq2(b)


@pytest.fixture()
def recorded(monkeypatch: pytest.MonkeyPatch) -> type[_RecordingMatcher]:
    _RecordingMatcher.longest = 0
    monkeypatch.setattr(difflib, "SequenceMatcher", _RecordingMatcher)
    return _RecordingMatcher


def test_a_huge_tool_name_is_not_ranked_and_the_error_is_bounded(
    registry: ToolRegistry, recorded: type[_RecordingMatcher]
) -> None:
    result = execute(call("a" * 2_000_000, {}), registry)
    assert result.error_kind == "unknown_tool"
    assert len(result.content) < 1000
    assert result.content.startswith("Error: unknown tool `aaaa")
    assert "(2,000,000 characters; tool names are at most 64)" in result.content
    assert all(name in result.content for name in registry.names())
    assert recorded.longest < 1000  # the huge name was never handed to difflib
    assert len(result.name) < 100  # it goes back too, e.g. as <tool_result name="...">


def test_a_slightly_long_tool_name_is_still_ranked(registry: ToolRegistry) -> None:
    result = execute(call("get_weather_" + "x" * 60, {}), registry)
    assert "(72 characters; tool names are at most 64)" in result.content
    listing = result.content.split("Available tools: ")[1]
    assert listing.startswith("get_weather")


def test_many_tools_are_listed_up_to_a_cap() -> None:
    def make(index: int) -> Any:
        def numbered() -> str:
            return str(index)

        numbered.__name__ = f"tool_{index:03d}"
        return tool(numbered)

    many = ToolRegistry.from_functions(*(make(i) for i in range(200)))
    result = execute(call("nope"), many)
    assert result.error_kind == "unknown_tool"
    assert "… and 170 more" in result.content
    assert result.content.count("tool_") == 30


def test_a_flood_of_unexpected_arguments_is_bounded(
    registry: ToolRegistry, recorded: type[_RecordingMatcher]
) -> None:
    flood = {f"extra_{i}": i for i in range(100_000)}
    result = execute(call("get_weather", {"city": "Paris", **flood}), registry)
    assert result.error_kind == "invalid_arguments"
    assert len(result.content) < 4000
    lines = result.content.splitlines()
    assert lines[0] == "Error: invalid arguments for `get_weather`:"
    assert lines[1].startswith("- unexpected argument `extra_0`: remove it")
    assert "- … and 99,990 more problems" in lines
    assert lines[-1] == "Fix these and call `get_weather` again."


def test_a_huge_argument_name_or_value_is_cut_in_the_error(
    registry: ToolRegistry, recorded: type[_RecordingMatcher]
) -> None:
    result = execute(call("get_weather", {"city": "Paris", "c" * 2_000_000: 1}), registry)
    assert len(result.content) < 1000
    assert "`cccc" in result.content and "(2,000,000 characters)" in result.content
    assert recorded.longest < 1000
    value = execute(call("get_weather", {"city": "Paris", "day": "d" * 2_000_000}), registry)
    assert value.error_kind == "invalid_arguments"
    assert len(value.content) < 1000 and "`day` must be one of" in value.content


def test_a_flood_of_bad_items_is_bounded(registry: ToolRegistry) -> None:
    result = execute(call("add", {"n": 1, "tags": [{"x": 1}] * 100_000}), registry)
    assert result.error_kind == "invalid_arguments"
    assert len(result.content) < 2000
    strict = ToolRegistry.from_functions(total)
    flood = execute(call("total", {"values": ["x"] * 100_000}), strict)
    assert flood.error_kind == "invalid_arguments"
    assert len(flood.content) < 4000
    assert "- `values[0]` should be integer, got string" in flood.content
    assert "more problems" in flood.content


@tool
def total(values: list[int]) -> int:
    return sum(values)


# --- plainly_valid: the check that spares a run loading jsonschema ---------------------------

_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from([0.0, 1.0, 1.5, -2.0, float("inf")])
    | st.sampled_from(["", "a", "today", "tomorrow", "1"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abc"), inner),
    max_leaves=6,
)
_type_names = st.sampled_from(
    ["string", "integer", "number", "boolean", "null", "array", "object", "strng"]
)
_schemas = st.recursive(
    st.booleans()
    | st.fixed_dictionaries(
        {},
        optional={
            "type": _type_names | st.lists(_type_names, min_size=1, max_size=3),
            "enum": st.lists(
                st.sampled_from(["today", "a", 1, True, 1.0, None]), min_size=1, max_size=3
            ),
            "description": st.just("text"),
            "format": st.just("email"),
            "minimum": st.just(0),
            "pattern": st.just("^a"),
        },
    ),
    lambda inner: st.fixed_dictionaries(
        {},
        optional={
            "type": _type_names,
            "properties": st.dictionaries(st.sampled_from("abc"), inner, max_size=3),
            "required": st.lists(st.sampled_from("abcd"), max_size=3, unique=True),
            "additionalProperties": st.booleans() | inner,
            "items": inner,
            "anyOf": st.lists(inner, min_size=1, max_size=2),
        },
    ),
    max_leaves=6,
)


def _parameters(func: Any) -> dict[str, Any]:
    found = ToolRegistry.from_functions(func).get(func.__name__)
    assert found is not None
    return found.spec.parameters


def _jsonschema_finds_no_error(schema: Any, instance: Any) -> bool:
    return next(_validator_of(schema).iter_errors(instance), None) is None


@settings(max_examples=600, deadline=None)
@given(_schemas, _json_values)
# Found by this test on a clean checkout: an anyOf option of an unknown type read as "does not
# fit" beside an option that fits, where jsonschema refuses the schema.
@example({"items": {}, "anyOf": [{"type": "strng"}, True]}, None)
def test_plainly_valid_says_valid_only_when_jsonschema_agrees(schema: Any, instance: Any) -> None:
    try:
        jsonschema_valid = _jsonschema_finds_no_error(schema, instance)
    except Exception:  # a schema jsonschema cannot use (an unknown type): never plainly valid
        assert not plainly_valid(schema, instance)
        return
    if plainly_valid(schema, instance):
        assert jsonschema_valid


@pytest.mark.parametrize(
    ("schema", "instance"),
    [
        (_parameters(get_weather), {"city": "Paris"}),
        (_parameters(get_weather), {"city": "Paris", "day": "tomorrow"}),
        (_parameters(add), {"n": 2, "m": 3.0}),
        (_parameters(add), {"n": 2, "tags": ["x", "y"]}),
        (_parameters(add), {"n": 2, "tags": None}),
    ],
)
def test_plain_calls_are_judged_without_jsonschema(schema: Any, instance: Any) -> None:
    """The bundled tools' usual calls: plainly valid, so a run never needs jsonschema."""
    assert plainly_valid(schema, instance)


@pytest.mark.parametrize(
    ("schema", "instance"),
    [
        (_parameters(get_weather), {"city": "Paris", "day": "yesterday"}),
        (_parameters(get_weather), {"day": "today"}),
        (_parameters(get_weather), {"city": "Paris", "town": "x"}),
        (_parameters(add), {"n": "2"}),
        (_parameters(add), {"n": True}),
        (_parameters(add), {"n": 2.5}),
        (_parameters(add), {"n": 2, "tags": [1]}),
    ],
)
def test_wrong_calls_are_left_to_jsonschema(schema: Any, instance: Any) -> None:
    assert not plainly_valid(schema, instance)
    assert not _jsonschema_finds_no_error(schema, instance)


def test_a_schema_that_cannot_check_arguments_is_said_in_one_line() -> None:
    # An MCP server's inputSchema is somebody else's: it is checked before the tool is offered.
    bad_pattern = {"type": "object", "properties": {"a": {"type": "string", "pattern": "(["}}}
    assert schema_problem(bad_pattern) == (
        "is not valid JSON Schema (SchemaError: '([' is not a 'regex')"
    )
    assert schema_problem({"type": "frob"}) is not None
    assert schema_problem({"type": "object", "properties": {"a": {"type": "string"}}}) is None


@pytest.mark.parametrize(
    "parameters",
    [
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}},
        {"type": "object", "properties": {"a": {"type": "string", "pattern": "(["}}},
    ],
)
def test_a_call_to_a_tool_whose_schema_jsonschema_cannot_use_is_an_error_result(
    parameters: dict[str, Any],
) -> None:
    # Found in review: jsonschema raised out of the executor and the run ended in an internal
    # error. The call is answered instead, and the tool never runs.
    ran: list[str] = []
    spec = ToolSpec(name="lookup", description="Look a thing up.", parameters=parameters)
    registry = ToolRegistry([Tool(spec=spec, func=lambda **_: ran.append("x"), source="mcp:s")])
    result = execute(call("lookup", {"a": "x"}), registry)
    assert not result.ok and result.error_kind == "invalid_arguments"
    assert "schema cannot be checked" in result.content and not ran
