"""A tool's JSON Schema, checked without fetching anything and within the time the call has
(toolcall_cli/tools/validation.py), through the executor's prepare() where it is used."""

from __future__ import annotations

import threading
import time
import urllib.request
from typing import Any

import pytest

from toolcall_cli.messages import ToolCall, ToolResult, ToolSpec
from toolcall_cli.tools.executor import prepare
from toolcall_cli.tools.registry import Tool, ToolRegistry
from toolcall_cli.tools.validation import (
    CheckTimedOut,
    bounded,
    readable_schema,
    schema_problem,
    validator,
    within,
)

CATASTROPHIC = {"type": "string", "pattern": "^(a|aa)+$"}
"""Hours of backtracking on "a" * 60 + "!", for re and for the regex module alike."""


def registry_with(parameters: dict[str, Any], name: str = "lookup") -> ToolRegistry:
    """A registry whose one tool has `parameters` as its schema, as an MCP server's would."""
    registry = ToolRegistry()
    spec = ToolSpec(name, "Look up a word.", parameters)
    registry.add(Tool(spec=spec, func=lambda **_: "ok", source=""))
    return registry


def words(word: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"word": word}, "required": ["word"]}


@pytest.fixture
def nothing_fetched(monkeypatch: pytest.MonkeyPatch) -> None:
    """jsonschema's deprecated $ref retrieval opens URLs (file:// too) with urlopen."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"a schema reference was fetched: {args!r}")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)


# --- references -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "schema",
    [
        words({"$ref": "#/$defs/word"}) | {"$defs": {"word": {"type": "string"}}},
        words({"$ref": "#/definitions/word"}) | {"definitions": {"word": {"type": "string"}}},
        {"$id": "https://tools.test/lookup", **words({"$ref": "lookup#/$defs/w"})}
        | {"$defs": {"w": {"type": "string"}}},
        words({"$id": "https://tools.test/word", "$ref": "#/$defs/w", "$defs": {"w": {}}}),
        words({"$ref": "https://json-schema.org/draft/2020-12/meta/meta-data"}),  # shipped
        {**words({"type": "string"}), "$schema": "http://127.0.0.1:9/meta"},
    ],
)
def test_references_inside_the_schema_resolve(
    schema: dict[str, Any], nothing_fetched: None
) -> None:
    assert schema_problem(schema) is None
    errors = list(validator(schema).iter_errors({"word": "cat"}))  # resolved: no exception
    assert [e.message for e in errors] in ([], ["'cat' is not of type 'object', 'boolean'"])


@pytest.mark.parametrize(
    ("reference", "schema"),
    [
        ("http://127.0.0.1:9/word.json", None),
        ("file:///etc/passwd", None),
        ("file:///dev/zero", None),
        ("#/$defs/missing", None),
        ("other.json", {"$id": "https://tools.test/lookup", **words({"$ref": "other.json"})}),
        ("#meta", words({"$dynamicRef": "#meta"})),
    ],
)
def test_a_reference_outside_the_schema_is_named_at_load_and_never_fetched(
    reference: str, schema: dict[str, Any] | None, nothing_fetched: None
) -> None:
    schema = schema or words({"$ref": reference})
    problem = schema_problem(schema) or ""
    assert problem.startswith(f"refers to {reference}, which is not in the schema itself")
    assert "fetches nothing" in problem
    # A tool that was not checked at load (a plugin's, say) is refused at the call, unfetched.
    result = prepare(ToolCall("c1", "lookup", {"word": "cat"}), registry_with(schema), time_limit=5)
    assert isinstance(result, ToolResult) and not result.ok
    assert "cannot be checked" in result.content and reference in result.content


def test_a_reference_in_data_is_not_a_reference() -> None:
    # `enum` and `default` hold values, not schemas: a "$ref" key there is only text.
    schema = words({"enum": [{"$ref": "http://127.0.0.1:9/x"}], "default": {"$ref": "y"}})
    assert schema_problem(schema) is None


# --- patterns and time ------------------------------------------------------------------------


def test_a_catastrophic_pattern_is_stopped_at_the_time_the_call_has() -> None:
    registry = registry_with(words(CATASTROPHIC), "spell")
    call = ToolCall("c1", "spell", {"word": "a" * 60 + "!"})
    result = prepare(call, registry, time_limit=0.5)
    assert isinstance(result, ToolResult) and result.error_kind == "timeout"
    assert result.content.startswith(
        "Error: the arguments for `spell` could not be checked against its schema within 0.5 s"
    )


@pytest.mark.parametrize(
    ("schema", "arguments"),
    [
        (words(CATASTROPHIC), {"word": "a" * 60 + "!"}),
        ({"type": "object", "patternProperties": {"^(a|aa)+$": {}}}, {"a" * 60 + "!": 1}),
        (
            {"type": "object", "patternProperties": {"^(a|aa)+$": {}}, "additionalProperties": {}},
            {"a" * 60 + "!": 1},
        ),
    ],
)
def test_every_keyword_that_matches_a_pattern_stops_in_time(
    schema: dict[str, Any], arguments: dict[str, Any]
) -> None:
    with within(0.3), pytest.raises(CheckTimedOut):
        bounded(lambda: list(validator(schema).iter_errors(arguments)))


def test_patterns_still_judge_what_they_can() -> None:
    schema = {
        "type": "object",
        "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}},
        "patternProperties": {"^x-": {"type": "integer"}},
        "additionalProperties": False,
    }
    check = validator(schema)
    with within(10):
        assert list(check.iter_errors({"code": "ABC", "x-n": 1})) == []
        messages = sorted(e.message for e in check.iter_errors({"code": "abc", "x-n": "1", "y": 0}))
    assert messages == [
        "'1' is not of type 'integer'",
        "'abc' does not match '^[A-Z]{3}$'",
        "'y' does not match any of the regexes: '^x-'",
    ]


def test_a_check_that_cannot_be_stopped_is_refused_at_load() -> None:
    # jsonschema matches patternProperties with `re` to find the unevaluated properties.
    schema = {"type": "object", "patternProperties": {"^a": {}}, "unevaluatedProperties": False}
    assert "patternProperties beside unevaluatedProperties" in (schema_problem(schema) or "")


def test_the_caller_waits_no_longer_than_the_time_left() -> None:
    # Wall-clock time: a check that does not return (here: waits) is abandoned at the deadline.
    release = threading.Event()
    started = time.monotonic()
    with within(0.2), pytest.raises(CheckTimedOut):
        bounded(release.wait)
    release.set()
    assert time.monotonic() - started < 30  # a hang, not a speed: release.wait() never returns


def test_unique_items_is_judged_as_json_schema_says() -> None:
    check = validator({"type": "array", "uniqueItems": True})
    assert not list(check.iter_errors([1, True, "1", None, False, 0, [1], {"a": 1}, {"a": True}]))
    for repeated in ([1, 1.0], [{"a": [1]}, {"a": [1.0]}], [{"a": 1, "b": 2}, {"b": 2, "a": 1}]):
        assert [e.validator for e in check.iter_errors(repeated)] == ["uniqueItems"]
    with within(60):  # pairwise, as jsonschema compares objects, this was 10^8 comparisons
        assert not list(check.iter_errors([{"n": n} for n in range(20_000)]))


# --- schemas every reader can read ------------------------------------------------------------


def test_true_and_false_subschemas_become_objects_that_mean_the_same() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"a": True, "b": False, "c": {"anyOf": [True, {"type": "integer"}]}},
        "items": True,
        "additionalProperties": False,
    }
    readable = readable_schema(schema)
    assert readable["properties"] == {
        "a": {},
        "b": {"not": {}},
        "c": {"anyOf": [{}, {"type": "integer"}]},
    }
    assert readable["items"] == {} and readable["additionalProperties"] is False
    assert schema["properties"]["a"] is True  # the server's own schema is left as it was
    for instance in ({"a": 1}, {"b": 1}, {"c": "x"}, {"z": 1}):
        assert validator(schema).is_valid(instance) == validator(readable).is_valid(instance)
