"""The tool-call text parser: what it finds in model text, fed whole or in pieces."""

from __future__ import annotations

import builtins
import json
import time
from collections.abc import Sequence
from typing import Any

import pytest

from toolcall_cli.events import CallForming, ParseError, ParserEvent, TextDelta, ToolCallParsed
from toolcall_cli.strategies.text_parser import CallTextParser, ParsedText, parse_text


def call(name: str, arguments: Any) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


def calls_of(parsed: ParsedText) -> list[tuple[str, Any]]:
    return [(c.name, c.arguments) for c in parsed.calls]


def feed_all(parser: CallTextParser, chunks: list[str]) -> list[Sequence[ParserEvent]]:
    return [parser.feed(chunk) for chunk in chunks]


def streamed(text: str, size: int = 1) -> ParsedText:
    parser = CallTextParser()
    for start in range(0, len(text), size):
        parser.feed(text[start : start + size])
    parser.close()
    return ParsedText(parser.text, tuple(parser.calls), tuple(parser.errors), parser.reasoning)


# --- calls and the prose around them --------------------------------------------------------------


def test_several_calls_with_prose_before_between_and_after() -> None:
    text = f"Checking.\n{call('a', {'x': 1})} and {call('b', {})}\nDone."
    parsed = parse_text(text)
    assert calls_of(parsed) == [("a", {"x": 1}), ("b", {})]
    assert parsed.text == "Checking.\n and \nDone."
    assert parsed.errors == ()


def test_chinese_prose_around_calls_is_display_text() -> None:
    text = "好的，我来查一下北京的天气。" + call("get_weather", {"city": "北京"}) + "\n稍等片刻。"
    parsed = parse_text(text)
    assert calls_of(parsed) == [("get_weather", {"city": "北京"})]
    assert parsed.text == "好的，我来查一下北京的天气。\n稍等片刻。"


def test_call_ids_count_calls_and_errors_in_order_with_the_prefix() -> None:
    text = call("a", {}) + '<tool_call>{"nope": 1}</tool_call>' + call("b", {})
    parsed = parse_text("x" + text, call_id_prefix="r2_")
    assert [c.id for c in parsed.calls] == ["r2_0", "r2_2"]
    assert [e.call_id for e in parsed.errors] == ["r2_1"]


def test_raw_is_the_exact_call_text_and_repaired_is_false_for_valid_json() -> None:
    text = 'Hi <tool_call>\n {"name": "f", "arguments": {"a": [1, 2]}}\n</tool_call> bye'
    (parsed_call,) = parse_text(text).calls
    assert (
        parsed_call.raw == '<tool_call>\n {"name": "f", "arguments": {"a": [1, 2]}}\n</tool_call>'
    )
    assert parsed_call.repaired is False


def test_events_come_in_reply_order() -> None:
    parser = CallTextParser()
    events = [*parser.feed("before " + call("f", {}) + " after"), *parser.close()]
    kinds = [e.kind for e in events if not isinstance(e, CallForming)]
    assert kinds == ["text_delta", "tool_call_parsed", "text_delta"]


# --- code fences ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fenced",
    [
        '```json\n{"name": "f", "arguments": {"a": 1}}\n```',
        '```\n  {"name": "f", "arguments": {"a": 1}}\n```',
        '```xml\n<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>\n```',
        '```json\n<function_call> {"name": "f", "arguments": {"a": 1}} </function_call>\n```',
    ],
)
def test_fence_around_a_call_is_dropped(fenced: str) -> None:
    parsed = parse_text(f"Calling:\n{fenced}\nthen more")
    assert calls_of(parsed) == [("f", {"a": 1})]
    assert "```" not in parsed.text
    assert parsed.text.startswith("Calling:\n") and parsed.text.endswith("then more")


@pytest.mark.parametrize(
    "code",
    [
        "```python\nprint({'a': 1})\n```",
        '```json\n{"a": 1, "b": [2]}\n```',
        '```python\nx = {"name": "f", "arguments": {}}\n```',
        "```\nplain <b>code</b>\n```",
    ],
)
def test_fence_around_ordinary_code_is_unchanged_text(code: str) -> None:
    text = f"Example:\n{code}\nEnd."
    parsed = parse_text(text)
    assert parsed.calls == () and parsed.errors == ()
    assert parsed.text == text


# --- tags, bare JSON and their policies -----------------------------------------------------------


def test_missing_close_tag_at_the_end_with_complete_json_is_still_a_call() -> None:
    parsed = parse_text('<tool_call>\n{"name": "f", "arguments": {"trigger": true}}\n')
    assert calls_of(parsed) == [("f", {"trigger": True})]
    assert parsed.errors == ()


def test_a_new_call_after_a_complete_unclosed_one_ends_it() -> None:
    text = '<tool_call>{"name": "a", "arguments": {}}\n' + call("b", {"x": 2})
    assert calls_of(parse_text(text)) == [("a", {}), ("b", {"x": 2})]


@pytest.mark.parametrize(
    "text",
    [
        'Result: {"name": "f", "arguments": {"a": 1}} ok',
        '{"name": "f", "parameters": {"a": 1}}',
        '{\n  "name": "f",\n  "arguments": {"a": 1}\n}',
    ],
)
def test_bare_json_call_anywhere_is_a_call(text: str) -> None:
    assert calls_of(parse_text(text)) == [("f", {"a": 1})]


def test_bare_json_array_of_calls_is_several_calls() -> None:
    text = 'Plan: [{"name": "a", "arguments": {}}, {"name": "b", "parameters": {"x": 1}}] go'
    parsed = parse_text(text)
    assert calls_of(parsed) == [("a", {}), ("b", {"x": 1})]
    assert parsed.text == "Plan:  go"


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1} is a dict',
        "{}",
        '{"name": "no_arguments_key"}',
        '[{"name": "Ana", "age": 3}]',
        'see {"query": "x"} and [1, 2]',
        "a set {1, 2} and a list [3]",
    ],
)
def test_json_that_is_not_a_call_is_unchanged_text(text: str) -> None:
    parsed = parse_text(text)
    assert parsed.calls == () and parsed.errors == ()
    assert parsed.text == text


def test_missing_arguments_inside_tags_means_empty_arguments() -> None:
    assert calls_of(parse_text('<tool_call>{"name": "now"}</tool_call>')) == [("now", {})]


def test_parameters_is_an_alias_of_arguments() -> None:
    text = '<tool_call>{"name": "f", "parameters": {"a": 1}}</tool_call>'
    assert calls_of(parse_text(text)) == [("f", {"a": 1})]


def test_double_encoded_arguments_are_decoded_once() -> None:
    once = json.dumps({"a": 1})
    twice = json.dumps(once)
    assert calls_of(parse_text(call("f", once))) == [("f", {"a": 1})]
    # A string holding a JSON string is not an object: kept, never decoded a second time.
    assert calls_of(parse_text(call("f", twice))) == [("f", twice)]


@pytest.mark.parametrize("arguments", ["hello", 42, "{hello world}", [1, 2], None])
def test_other_non_object_arguments_are_kept_as_they_are(arguments: Any) -> None:
    assert calls_of(parse_text(call("f", arguments))) == [("f", arguments)]


@pytest.mark.parametrize(
    "tag", ["tool", "tools", "response", "json", "JSON", "xml", "function_call"]
)
def test_alternative_wrapper_tags_hold_calls(tag: str) -> None:
    text = f'Sure.<{tag}>\n  {{"name": "f", "arguments": {{"a": 1}}}}\n</{tag}>'
    parsed = parse_text(text)
    assert calls_of(parsed) == [("f", {"a": 1})]
    assert parsed.text == "Sure."


@pytest.mark.parametrize(
    "text",
    [
        "use the <tool> element here",
        "wrap it in <response>text</response>",
        "<json> is a tag name",
        "mention <tool_call> in prose",
        "<xml>\n</xml>",
    ],
)
def test_wrapper_tags_without_json_after_them_are_text(text: str) -> None:
    parsed = parse_text(text)
    assert parsed.calls == () and parsed.errors == ()
    assert parsed.text == text


@pytest.mark.parametrize(
    "text",
    [
        '[TOOL_CALLS][{"name": "f", "arguments": {"a": 1}}]',  # Mistral
        'Sure.\n[TOOL_CALLS] [{"name": "f", "arguments": {"a": 1}}]</s>',
        '<|python_tag|>{"name": "f", "parameters": {"a": 1}}<|eom_id|>',  # Llama 3.1
        '<|python_tag|>{"name": "f", "parameters": {"a": 1}}',
    ],
)
def test_native_call_markers_are_markup_not_display_text(text: str) -> None:
    # They were read past as prose, so "[TOOL_CALLS]" and "<|python_tag|>" were shown to the
    # user as the model's words, and kept in the history.
    for parsed in (parse_text(text), *(streamed(text, size) for size in (1, 2, 5))):
        assert calls_of(parsed) == [("f", {"a": 1})] and parsed.errors == ()
        assert parsed.text.strip() in ("", "Sure.")


@pytest.mark.parametrize(
    "text",
    [
        "The marker [TOOL_CALLS] is what Mistral writes.",
        "see [the docs](x), [1, 2], [TOOL_CALL",
        # A list after a marker is a call list only when it holds an object.
        "Mistral prefixes calls with [TOOL_CALLS] [see the docs](https://docs.mistral.ai).",
        "Llama writes <|python_tag|> [then code].",
        "[TOOL_CALLS]\n[TOOL_CALLS]",
    ],
)
def test_a_native_call_marker_without_json_after_it_is_text(text: str) -> None:
    for parsed in (parse_text(text), streamed(text)):
        assert parsed.calls == () and parsed.errors == () and parsed.text == text


def test_a_long_reply_of_brackets_read_at_once_is_read_in_linear_time() -> None:
    # Each `<` (and, with [TOOL_CALLS], each `[`) copied the rest of the reply to see whether
    # it might still become an opener: 200,000 of them took over 5 s, 400,000 four times that.
    # The parse's own CPU time is measured, not the wall clock: linear, it needs about half a
    # second, and on a loaded machine waiting for a core had taken the wall clock past 2 s.
    for mark in "<[":
        started = time.process_time()
        parse_text(mark * 400_000)
        assert time.process_time() - started < 5, mark


def test_tool_call_mentioned_in_prose_does_not_hide_a_later_call() -> None:
    text = "Use <tool_call> tags. " + call("f", {"a": 1}) + " ok"
    parsed = parse_text(text)
    assert calls_of(parsed) == [("f", {"a": 1})] and parsed.errors == ()
    assert parsed.text == "Use <tool_call> tags.  ok"


def test_function_tags_carry_the_name() -> None:
    text = '<function=add>{"x": 1}</function>\n<function name="sub">\n{"x": 2}\n</function>'
    assert calls_of(parse_text(text)) == [("add", {"x": 1}), ("sub", {"x": 2})]


def test_qwen3_coder_xml_body_inside_tool_call() -> None:
    text = (
        "<tool_call>\n<function=python>\n<parameter=code>\n格\n</parameter>\n</function>\n"
        "</tool_call>"
    )
    assert calls_of(parse_text(text)) == [("python", {"code": "格"})]


def test_odd_whitespace_around_and_inside_tags() -> None:
    text = (
        'a\n\n<tool_call>\n\n   \t{ "name" :\n "f" ,\n "arguments" : { "a" : 1 } }  \n\n'
        "</tool_call>\n\n b"
    )
    parsed = parse_text(text)
    assert calls_of(parsed) == [("f", {"a": 1})]
    assert parsed.text == "a\n\n\n\n b"


# --- JSON-aware scanning --------------------------------------------------------------------------


def test_braces_and_close_tags_inside_strings_do_not_end_the_call() -> None:
    arguments = {"q": "explain </tool_call> and {braces} ]]", "s": 'say \\"hi\\" }'}
    parsed = parse_text(call("search", arguments) + " after")
    assert calls_of(parsed) == [("search", arguments)]
    assert parsed.text == " after"


def test_single_quoted_strings_are_scanned_and_repaired() -> None:
    text = "<tool_call>{'name': 'f', 'arguments': {'q': 'a </tool_call> b'}}</tool_call>!"
    parsed = parse_text(text)
    assert calls_of(parsed) == [("f", {"q": "a </tool_call> b"})]
    assert parsed.calls[0].repaired is True
    assert parsed.text == "!"


def test_an_apostrophe_in_prose_inside_a_call_is_not_a_string() -> None:
    parser = CallTextParser()
    # Were the `'` taken as a string, the close tag would be inside it and nothing would
    # resolve until close().
    events = parser.feed("<tool_call>{it's not json}</tool_call> and after")
    assert [e.kind for e in events] == ["parse_error", "text_delta"]
    assert parser.close() == []


def test_an_unclosed_quote_is_reported_and_the_text_after_the_call_is_kept() -> None:
    parsed = parse_text('<tool_call>{"name": "f", "arguments": {"q": "abc}}</tool_call> tail')
    assert parsed.calls == ()
    assert len(parsed.errors) == 1 and not parsed.errors[0].truncated
    assert "quote" in parsed.errors[0].message
    assert parsed.text == " tail"


# --- repair and errors ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "{'name': 'f', 'arguments': {'a': 1}}",
        '{"name": "f", "arguments": {"a": 1,},}',
        '{name: "f", arguments: {a: 1}}',
    ],
)
def test_repair_is_used_only_when_strict_json_fails(body: str) -> None:
    (parsed_call,) = parse_text(f"<tool_call>{body}</tool_call>").calls
    assert (parsed_call.name, parsed_call.arguments, parsed_call.repaired) == ("f", {"a": 1}, True)


@pytest.mark.parametrize(
    "body",
    [
        "{invalid json}",
        "{totally broken}",
        '{"arguments": {}}',
        "[1, 2]",
        '{"name": 5}',
        "",
        "not json at all",
    ],
)
def test_tag_content_that_is_not_a_call_is_a_parse_error_not_text(body: str) -> None:
    text = f"Before <tool_call>{body}</tool_call> after"
    parsed = parse_text(text)
    assert parsed.calls == ()
    assert len(parsed.errors) == 1
    error = parsed.errors[0]
    assert error.raw == f"<tool_call>{body}</tool_call>"
    assert '<tool_call>{"name": "<tool name>", "arguments":' in error.message
    assert error.truncated is False
    assert parsed.text == "Before  after"


def test_repaired_garbage_arguments_are_an_error() -> None:
    parsed = parse_text('<tool_call>{"name": "f", "arguments": {invalid json}}</tool_call>')
    assert parsed.calls == () and len(parsed.errors) == 1


def test_a_list_with_one_call_and_junk_keeps_the_call_and_reports_the_junk() -> None:
    text = '<tool_call>[{"name": "f", "arguments": {"a": 1}}, "junk"]</tool_call>'
    parsed = parse_text(text)
    assert calls_of(parsed) == [("f", {"a": 1})]
    assert [e.call_id for e in parsed.errors] == ["call_1"]


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            'I will check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "San Fr',
            "I will check.\n",
        ),
        ("I will check.\n<tool_call>", "I will check.\n"),
        ('<tool_call>{"name":"t","arguments":{}</tool_', ""),
        ('Now: {"name": "f", "arguments": {"a": [1, 2', "Now: "),
    ],
)
def test_a_reply_cut_inside_a_call_is_a_truncated_error(text: str, shown: str) -> None:
    parsed = parse_text(text)
    assert parsed.calls == ()
    assert [e.truncated for e in parsed.errors] == [True]
    assert "ended inside a tool call" in parsed.errors[0].message
    assert parsed.text == shown


def test_a_complete_call_survives_a_cut_second_call() -> None:
    text = call("a", {"x": 1}) + '\n<tool_call>\n{"name": "b", "arguments": {"q": "caf'
    parsed = parse_text(text)
    assert calls_of(parsed) == [("a", {"x": 1})]
    assert [(e.call_id, e.truncated) for e in parsed.errors] == [("call_1", True)]


@pytest.mark.parametrize(
    "text", ["[" * 5000, "{" * 5000 + '"', "\\" * 99], ids=["brackets", "braces", "backslashes"]
)
def test_hostile_text_outside_tags_is_shown_as_it_is(text: str) -> None:
    """Deep nesting and runs of escapes that look like no call: text, whole, fed at once or
    in pieces; nothing raises, nothing is guessed."""
    for parsed in (parse_text(text), streamed(text, 7)):
        assert parsed.text == text
        assert parsed.calls == () and parsed.errors == ()


def test_a_call_nested_too_deeply_is_a_parse_error_not_a_crash() -> None:
    text = "<tool_call>" + "[" * 5000 + "</tool_call>"
    batch, pieces = parse_text(text), streamed(text, 7)
    assert batch == pieces
    assert batch.text == "" and batch.calls == ()
    [error] = batch.errors
    assert "nested more than 64 levels deep" in error.message and not error.truncated


# --- reasoning ------------------------------------------------------------------------------------


def test_think_at_the_start_is_reasoning_and_never_parsed_for_calls() -> None:
    text = "  <think>maybe " + call("no", {}) + "</think>\n" + call("yes", {}) + "答案"
    parsed = parse_text(text)
    assert parsed.reasoning == "maybe " + call("no", {})
    assert calls_of(parsed) == [("yes", {})]
    assert parsed.text == "\n答案"


def test_think_later_in_the_reply_is_text() -> None:
    parsed = parse_text("Answer <think>x</think>")
    assert parsed.reasoning == "" and parsed.text == "Answer <think>x</think>"


def test_reasoning_arrives_as_reasoning_deltas() -> None:
    parser = CallTextParser()
    events = [e for chunk in ["<thi", "nk>ab", "c</th", "ink>t"] for e in parser.feed(chunk)]
    events += parser.close()
    assert [(e.kind, getattr(e, "text", None)) for e in events] == [
        ("reasoning_delta", "ab"),
        ("reasoning_delta", "c"),
        ("text_delta", "t"),
    ]


# --- things that only look like tags --------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["a < b", "x<y", "<b>bold</b>", "before <tool_c", "1 <= 2 <", "<fun"]
)
def test_text_that_only_looks_like_a_tag_is_shown(text: str) -> None:
    for parsed in (parse_text(text), streamed(text)):
        assert parsed.text == text and parsed.calls == ()


def test_a_partial_tag_at_the_end_is_flushed_at_close() -> None:
    parser = CallTextParser()
    assert [e for e in parser.feed("before <tool_c") if isinstance(e, TextDelta)] == [
        TextDelta(text="before ")
    ]
    assert parser.close() == [TextDelta(text="<tool_c")]


@pytest.mark.parametrize(
    "chunks",
    [
        ["<tool", '_call>{"name": "f", "arguments": {}}<', "/tool_call>"],
        ["<", "tool_call", '>{"name": "f", "arguments": {}}</tool_c', "all>"],
        ["``", '`json\n{"name": "f", "arguments": {}}\n`', "``"],
        ["{", ' "name": "f", "arguments": {}', "}"],
    ],
)
def test_tags_split_anywhere_across_chunks_are_recognised(chunks: list[str]) -> None:
    parser = CallTextParser()
    feed_all(parser, chunks)
    parser.close()
    assert [(c.name, c.arguments) for c in parser.calls] == [("f", {})]
    assert parser.text.strip() == ""


# --- streaming ------------------------------------------------------------------------------------


def test_a_call_is_returned_by_the_feed_that_closes_it() -> None:
    parser = CallTextParser()
    text = "Hi " + call("f", {"a": 1})
    first = parser.feed(text[:-1])
    assert not any(isinstance(e, ToolCallParsed) for e in first)
    second = parser.feed(text[-1])
    assert [e.call.name for e in second if isinstance(e, ToolCallParsed)] == ["f"]


def test_a_bare_call_is_returned_by_the_feed_with_its_closing_brace() -> None:
    parser = CallTextParser()
    parser.feed('Go {"name": "f", "arguments": {"a": 1}')
    events = parser.feed("} and more")
    assert [e.kind for e in events] == ["tool_call_parsed", "text_delta"]


def test_plain_prose_is_emitted_at_once() -> None:
    parser = CallTextParser()
    assert parser.feed("Hello, ") == [TextDelta(text="Hello, ")]
    assert parser.feed("{world} [1] `x` ok") == [TextDelta(text="{world} [1] `x` ok")]


def test_call_forming_shows_index_name_and_partial_arguments() -> None:
    parser = CallTextParser()
    parser.feed(call("first", {}))
    text = '<tool_call>{"name": "write", "arguments": {"text": "' + "x" * 500 + '"}}</tool_call>'
    forming = [e for chunk in text for e in parser.feed(chunk) if isinstance(e, CallForming)]
    assert forming and all(e.index == 1 for e in forming)
    assert forming[0].name is None
    named = [e for e in forming if e.name == "write"]
    assert named and named[-1].arguments_text.startswith('{"text": "xxx')
    lengths = [len(e.arguments_text) for e in named]
    assert lengths == sorted(lengths) and lengths[-1] > 400
    assert len(forming) < len(text) // 5  # not one per character


def test_at_most_one_call_forming_per_feed() -> None:
    parser = CallTextParser()
    text = '<tool_call>{"name": "f", "arguments": {"a": "' + "y" * 300
    for start in range(0, len(text), 40):
        events = parser.feed(text[start : start + 40])
        assert sum(isinstance(e, CallForming) for e in events) <= 1


def test_feed_after_close_is_a_programming_error() -> None:
    parser = CallTextParser()
    parser.close()
    with pytest.raises(RuntimeError):
        parser.feed("x")


def test_parse_error_events_are_fed_back_not_raised() -> None:
    parser = CallTextParser()
    events = parser.feed("<tool_call>{invalid}</tool_call>")
    errors = [e for e in events if isinstance(e, ParseError)]
    assert len(errors) == 1 and parser.errors == errors


# --- security -------------------------------------------------------------------------------------


def test_nothing_is_ever_evaluated(monkeypatch: pytest.MonkeyPatch) -> None:
    import ast

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the parser evaluated model text")

    for name in ("eval", "exec"):
        monkeypatch.setattr(builtins, name, refuse)
    monkeypatch.setattr(ast, "literal_eval", refuse)
    payload = "__import__('os').system('echo pwned')"
    text = (
        f"<tool_call>{{'name': 'f', 'arguments': {{'code': \"{payload}\"}}}}</tool_call>"
        f'{{"name": "g", "arguments": {{"x": {payload}}}}}'
        f"<tool_call>{payload}</tool_call>"
    )
    parsed = parse_text(text)
    streamed(text)
    assert calls_of(parsed)[0] == ("f", {"code": payload})


def test_a_fenced_call_with_unquoted_keys_is_still_a_call() -> None:
    text = '```json\n{name: "get_weather", arguments: {city: "北京"}}\n```'
    parsed = parse_text(text)
    assert [(c.name, c.arguments, c.repaired) for c in parsed.calls] == [
        ("get_weather", {"city": "北京"}, True)
    ]
    assert parsed.text.strip() == ""


def test_fenced_code_with_unquoted_keys_that_is_no_call_stays_text() -> None:
    text = "```js\n{a: 1}\n```\ndone"
    parsed = parse_text(text)
    assert parsed.calls == () and parsed.errors == () and parsed.text == text


def test_a_fence_around_tag_prose_that_is_no_call_keeps_its_markers() -> None:
    text = "Use this:\n```xml\n<tool_call> tag, then JSON\n```\nDone."
    parsed = parse_text(text)
    assert parsed.calls == () and parsed.text == text


def test_a_fence_around_a_tagged_call_is_dropped_with_it() -> None:
    parsed = parse_text('```xml\n<tool_call>{"name": "f", "arguments": {}}</tool_call>\n```\nok')
    assert [c.name for c in parsed.calls] == ["f"] and "```" not in parsed.text
