"""The repair policy: json-repair may fix syntax, never data. A repair that would change, drop or
invent a value is refused, fed back to the model as a parse error, and nothing runs."""

from __future__ import annotations

import json
import re
from typing import Any

import conformance
import pytest
from conformance import needs
from hypothesis import given, settings
from hypothesis import strategies as st

from toolcall_cli.events import Event, FedBack, ParseError, ToolFinished
from toolcall_cli.loop import run
from toolcall_cli.messages import Message
from toolcall_cli.models.scripted import ScriptedModel
from toolcall_cli.strategies import get_strategy
from toolcall_cli.strategies._repair import MAX_DEPTH, JsonProblem, load_json
from toolcall_cli.strategies.schema import NativeReplyParser, StructuredReplyParser
from toolcall_cli.strategies.text_parser import CallTextParser, ParsedText, parse_text
from toolcall_cli.tools.registry import ToolRegistry

WRITTEN: list[dict[str, Any]] = []


def write_file(path: str, content: str) -> str:
    """Write text to a file.

    Args:
        path: Where to write.
        content: The exact text to write.
    """
    WRITTEN.append({"path": path, "content": content})
    return "written"


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def run_script(replies: list[Any], strategy: str = "regex") -> list[Event]:
    WRITTEN.clear()
    model = ScriptedModel(replies)
    history: list[Message] = []
    events = list(
        run(
            "go",
            model=model,
            strategy=get_strategy(strategy),
            registry=ToolRegistry.from_functions(write_file, get_weather),
            history=history,
        )
    )
    model.assert_complete()
    return events


def per_character(text: str) -> ParsedText:
    parser = CallTextParser()
    for char in text:
        parser.feed(char)
    parser.close()
    return ParsedText(parser.text, tuple(parser.calls), tuple(parser.errors), parser.reasoning)


# --- the issue's examples, end to end -------------------------------------------------------------


def test_a_repair_that_loses_a_newline_is_not_run_and_the_model_is_told_why() -> None:
    call = '<tool_call>{"name": "write_file", "arguments": {"path": "c.txt", "content": "x\\n",}}'
    events = run_script([call + "</tool_call>", "I could not write it."])
    assert WRITTEN == []  # json-repair would have written "x", without the newline
    (error,) = [e for e in events if isinstance(e, ParseError)]
    assert "was not run" in error.message and "`x\\n` into `x`" in error.message
    fed = next(e for e in events if isinstance(e, FedBack))
    assert "`x\\n` into `x`" in fed.messages[0]["content"]


def test_a_repair_that_invents_a_value_is_not_run() -> None:
    events = run_script(
        ['<tool_call>{"name": "get_weather", "arguments": {"city": </tool_call>', "Sorry."]
    )
    assert not [e for e in events if isinstance(e, ToolFinished) and e.result.ok]
    (error,) = [e for e in events if isinstance(e, ParseError)]
    assert "add an empty string" in error.message


def test_the_same_refusal_in_native_arguments() -> None:
    message = {
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {
                    "name": "write_file",
                    "arguments": '{"path": "a", "content": "x\\n",}',
                },
            }
        ],
    }
    events = run_script([message, "done"], strategy="schema")
    assert WRITTEN == []
    (error,) = [e for e in events if isinstance(e, ParseError)]
    assert "`x\\n` into `x`" in error.message and error.call_id == "c1"


def test_the_same_refusal_in_json_mode() -> None:
    parser = StructuredReplyParser("call_")
    reply = '{"name": "write_file", "arguments": {"path": "a", "content": "x\\n",}}'
    parser.feed({"choices": [{"message": {"content": reply}, "finish_reason": "stop"}]})
    parser.close()
    (error,) = parser.reply().errors
    assert parser.reply().calls == () and "`x\\n` into `x`" in error.message


# --- what a repair may do: syntax ---------------------------------------------------------------

SYNTAX_ONLY = {
    "single quotes": ("{'name': 'f', 'arguments': {'city': 'Paris'}}", {"city": "Paris"}),
    "trailing commas": (
        '{"name": "f", "arguments": {"n": 1, "s": "a b",},}',
        {"n": 1, "s": "a b"},
    ),
    "unquoted keys": ('{name: "f", arguments: {city: "巴黎"}}', {"city": "巴黎"}),
    "a closing bracket missing at the end": (
        '{"name": "f", "arguments": {"x": [1, 2]}',
        {"x": [1, 2]},
    ),
    "Python literals": (
        '{"name": "f", "arguments": {"a": True, "b": None}}',
        {"a": True, "b": None},
    ),
    "unescaped quotes": (
        '{"name": "f", "arguments": {"q": "say "hi" now"}}',
        {"q": 'say "hi" now'},
    ),
    "unescaped quotes around a link": (
        '{"name": "f", "arguments": {"q": "[see]("https://example.com/a+b")"}}',
        {"q": '[see]("https://example.com/a+b")'},
    ),
    "an escaped apostrophe": ('{"name": "f", "arguments": {"q": "it\\\'s"}}', {"q": "it's"}),
    "a stray closing bracket": ('{"name": "f", "arguments": {"x": 1}}}', {"x": 1}),
    "a raw newline in a string": ('{"name": "f", "arguments": {"t": "a\nb"}}', {"t": "a\nb"}),
}


@pytest.mark.parametrize("body", SYNTAX_ONLY.values(), ids=list(SYNTAX_ONLY))
def test_a_syntax_only_repair_runs_with_exactly_what_the_model_wrote(
    body: tuple[str, dict[str, Any]],
) -> None:
    text, arguments = body
    parsed = parse_text(f"<tool_call>{text}</tool_call>")
    assert parsed.errors == ()
    (call,) = parsed.calls
    assert (call.name, call.arguments, call.repaired) == ("f", arguments, True)


# --- what it may not do: data -------------------------------------------------------------------

DATA_CHANGING = {
    "a lost newline": ('{"a": "x\\n",}', "`x\\n` into `x`"),
    "an invented value": ('{"a": ', "add an empty string"),
    "a dropped word": ('{"a": "x" "y"}', 'change `x" "y` into `x`'),
    "a cut-off string": ('{"a": "New', "close a string that never ends"),
    "a number read differently": ('{"a": 01}', "`01` into `1`"),
    "a leading dot": ('{"a": .5}', "`.5` into `0.5`"),
    "NaN": ('{"a": NaN}', "NaN (which JSON does not have)"),
    "values moved between brackets": ('{"a": [1, 2, "b": 3}', "drop `b`"),
    "a comment": ('{"a": 1 // one\n}', "`//`"),
    "prose inside the value": ('{"a": 1} and then', "drop `and`"),
    # Syntax the model wrote between two strings, which a repair would make part of one value.
    "a # comment": ('{"a": "Paris" # "London"}', 'make `" # "`, which the text has between'),
    "a concatenation": ("{'a': 'Pa' + 'ris'}", "make `' + '`, which the text has between"),
    "a // comment": ('{"a": "Paris" // "London"}', 'make `" // "`'),
    "a /* */ comment": ('{"a": "Paris"/* or */"London"}', 'make `"/* or */"`'),
    "a + with no spaces": ('{"a": "Pa"+"ris"}', 'make `"+"`'),
    "an operator word": ('{"a": "Paris" or "London"}', 'make `" or "`'),
    "a comment on its own line": ('{"a": "Paris"\n# "London"\n}', 'make `"\\n# "`'),
    "syntax in a key": ('{"ci" + "ty": "Paris"}', 'make `" + "`'),
}


@pytest.mark.parametrize("case", DATA_CHANGING.values(), ids=list(DATA_CHANGING))
def test_a_repair_that_changes_data_is_refused_saying_what_it_would_change(
    case: tuple[str, str],
) -> None:
    text, said = case
    with pytest.raises(JsonProblem, match=re.escape(said)):
        load_json(text)
    call = f'<tool_call>{{"name": "f", "arguments": {text}</tool_call>'
    parsed = parse_text(call)
    assert parsed.calls == ()
    assert len(parsed.errors) == 1 and "was not run" in parsed.errors[0].message


def test_arguments_nested_too_deeply_are_a_parse_error_not_a_crash() -> None:
    deep = "[" * 700 + "]" * 700
    parsed = parse_text(f'<tool_call>{{"name": "f", "arguments": {{"a": {deep}}}}}</tool_call>')
    assert parsed.calls == ()
    assert f"nested more than {MAX_DEPTH} levels" in parsed.errors[0].message
    native = NativeReplyParser("call_")
    native.feed(
        {
            "choices": [
                {
                    "message": {
                        "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": deep}}]
                    },
                    "finish_reason": "tool_calls",
                }
            ]
        }
    )
    native.close()
    assert native.reply().calls == () and "nested" in native.reply().errors[0].message


# --- nothing the model wrote is lost -----------------------------------------------------------


def test_prose_after_a_call_without_a_close_tag_stays_display_text() -> None:
    text = 'Sure <tool_call>{"name": "f", "arguments": {"a": 1}} The answer will follow.'
    parsed = parse_text(text)
    assert [(c.name, c.arguments) for c in parsed.calls] == [("f", {"a": 1})]
    assert parsed.text == "Sure  The answer will follow."
    assert per_character(text) == parsed


def test_two_calls_in_one_pair_of_tags_are_both_calls() -> None:
    text = '<tool_call>{"name": "a", "arguments": {}}\n{"name": "b", "arguments": {}}</tool_call>ok'
    parsed = parse_text(text)
    assert [c.name for c in parsed.calls] == ["a", "b"] and parsed.text == "ok"
    assert per_character(text) == parsed


def test_a_fenced_call_without_a_close_tag_keeps_its_fence_out_of_the_text() -> None:
    text = '```json\n<tool_call>{"name": "a", "arguments": {}}\n```\nbye'
    parsed = parse_text(text)
    assert [c.name for c in parsed.calls] == ["a"] and parsed.text.strip() == "bye"
    assert per_character(text) == parsed


# --- properties -----------------------------------------------------------------------------------

_SYNTAX = re.compile(r"[\s\x00-\x1f,:\"'{}\[\]]")
# Strings with the characters that trouble a repair (quotes, brackets, escapes, whitespace);
# no capitals, so no string reads as a Python literal (True, None) to the oracle below.
_ALPHABET = [*"abc xyz_,:{}[]\"'\\\n\t/#北京é", "\x08"]
_scalars = st.one_of(
    st.text(alphabet=_ALPHABET, max_size=12),
    st.integers(-(10**6), 10**6),
    st.booleans(),
    st.none(),
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(alphabet="abcxyz_", min_size=1, max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


_plain_values = st.recursive(
    # No whitespace: json-repair drops a string's trailing whitespace (then the repair is
    # refused, as it should be), and this property is about repairs that must be accepted.
    st.text(alphabet="abcxyz_北京", max_size=8) | st.integers() | st.booleans() | st.none(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(alphabet="abcxyz_", min_size=1, max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


@given(
    st.dictionaries(st.text(alphabet="abcxyz_", min_size=1, max_size=6), _plain_values, max_size=5)
)
@settings(max_examples=300, deadline=None)
def test_trailing_commas_and_missing_closers_give_back_the_very_same_value(
    value: dict[str, Any],
) -> None:
    text = json.dumps(value, ensure_ascii=False)
    damaged = re.sub(r"([}\]])", r",\1", text)  # a trailing comma before every closer
    damaged = damaged.rstrip("}]") or damaged  # and the closing brackets at the end left out
    loaded = load_json(damaged)  # syntax only: it must be accepted
    assert loaded.value == value


def _canonical_text(text: str) -> str:
    text = re.sub(r"\bTrue\b", "true", re.sub(r"\bFalse\b", "false", text))
    text = re.sub(r"\bNone\b", "null", text)
    return _SYNTAX.sub("", _ESCAPE.sub(_unescape, text))


_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)", re.S)


def _unescape(m: re.Match[str]) -> str:
    code = m.group(1)
    if code.startswith("u") and len(code) == 5:
        return chr(int(code[1:], 16))
    return " " if code in "nrtbf" else code


def _canonical_value(value: Any) -> str:
    def scalars(item: Any) -> Any:
        if isinstance(item, dict):
            for key, child in item.items():
                yield key
                yield from scalars(child)
        elif isinstance(item, list):
            for child in item:
                yield from scalars(child)
        else:
            yield item if isinstance(item, str) else json.dumps(item)

    return _SYNTAX.sub("", "".join(scalars(value)))


@given(
    st.dictionaries(st.text(alphabet="abcxyz_", min_size=1, max_size=6), _values, max_size=5),
    st.data(),
)
@settings(max_examples=400, deadline=None)
def test_whatever_the_damage_an_accepted_repair_keeps_every_character_of_data(
    value: dict[str, Any], data: st.DataObject
) -> None:
    # An oracle independent of the repair check: with all syntax characters removed, the text
    # and the repaired value must read the same.
    text = json.dumps(value, ensure_ascii=False)
    at = data.draw(st.integers(0, len(text)))
    if data.draw(st.booleans()):
        damaged = text[:at] + text[at + 1 :]
    else:
        damaged = text[:at] + data.draw(st.sampled_from(list(",:\"'{}[]x "))) + text[at:]
    try:
        loaded = load_json(damaged)
    except JsonProblem:
        return
    if loaded.repaired:
        assert _canonical_value(loaded.value) == _canonical_text(damaged)


@needs("repair_cases.jsonl")
def test_json_repairs_own_test_inputs_are_either_refused_or_keep_the_data() -> None:
    cases = conformance.cases("repair_cases.jsonl")
    accepted = refused = 0
    for case in cases:
        try:
            loaded = load_json(case["input"])
        except JsonProblem:
            refused += 1
            continue
        if loaded.repaired:
            accepted += 1
            assert _canonical_value(loaded.value) == _canonical_text(case["input"]), case
    # Both sides are exercised: plenty of real repairs pass, plenty of guesses are refused.
    assert accepted >= 30 and refused >= 60


@pytest.mark.parametrize(
    "broken",
    [
        "1{" * 4000,  # no comma or colon at all: 8 KB of this took json-repair five seconds
        '{"a"' * 2000,
        "[{" * 2000,
        "{a}," * 600,
    ],
)
def test_broken_json_with_many_brackets_is_never_handed_to_the_repairer(
    broken: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """json-repair's time grows with the square of a broken value's brackets and separators:
    past a few hundred the text is refused before the repairer sees it, so a hostile model
    cannot hold the run's thread."""
    import json_repair

    def never(*args: object, **kwargs: object) -> object:
        raise AssertionError("json-repair was asked to repair it")

    monkeypatch.setattr(json_repair, "loads", never)
    with pytest.raises(JsonProblem, match="too large to repair"):
        load_json(broken)
