"""Property tests: any chunking of any text parses exactly as the whole text does."""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolcall_cli.events import ToolCallParsed
from toolcall_cli.messages import ToolCall
from toolcall_cli.strategies.text_parser import CallTextParser, ParsedText, parse_text

SETTINGS = settings(max_examples=250, deadline=None)

_prose_alphabet = st.sampled_from(
    list("abc xyz\n\t.,:;!?'\"<>/{}[]`\\=_-|") + list("中文工具调用，。「」") + ["🌸", "é"]
)
prose = st.text(_prose_alphabet, max_size=25)
names = st.sampled_from(["get_weather", "search", "f", "天气", "write_file"])
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-99, 99) | st.text(_prose_alphabet, max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(_prose_alphabet, max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
arguments = st.dictionaries(st.text(_prose_alphabet, max_size=6), json_values, max_size=3)


@st.composite
def valid_calls(draw: st.DrawFn) -> str:
    payload = {
        "name": draw(names),
        draw(st.sampled_from(["arguments", "parameters"])): draw(arguments),
    }
    body = json.dumps(
        payload, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 1]))
    )
    space = draw(st.sampled_from(["", "\n", "  \n "]))
    tag = draw(
        st.sampled_from(["tool_call", "tool_call", "tool", "response", "json", "function_call"])
    )
    shape = draw(
        st.sampled_from(["tag", "bare", "fence", "fenced_tag", "array", "function", "mistral"])
    )
    if shape == "bare":
        return body
    if shape == "fence":
        return f"```json\n{body}\n```"
    if shape == "fenced_tag":
        return f"```xml\n<{tag}>{space}{body}{space}</{tag}>\n```"
    if shape == "array":
        return f"[{body}, {body}]"
    if shape == "mistral":  # Mistral v11+: the name outside the JSON, one marker per call
        heads = st.sampled_from(["[ARGS]", "[CALL_ID]a1B2c3D4e[ARGS]", ""])
        calls = draw(st.lists(st.tuples(names, heads, arguments), min_size=1, max_size=2))
        return "".join(f"[TOOL_CALLS]{n}{h}{json.dumps(a)}" for n, h, a in calls) + "</s>"
    if shape == "function":
        return f"<function={payload['name']}>{json.dumps(draw(arguments))}</function>"
    return f"<{tag}>{space}{body}{space}</{tag}>"


@st.composite
def broken_calls(draw: st.DrawFn) -> str:
    whole = draw(valid_calls())
    kind = draw(st.sampled_from(["cut", "single_quotes", "junk", "no_close", "garbage"]))
    if kind == "cut":
        return whole[: draw(st.integers(0, len(whole)))]
    if kind == "single_quotes":
        return whole.replace('"', "'")
    if kind == "junk":
        return "<tool_call>" + draw(prose) + "</tool_call>"
    if kind == "no_close":
        return whole.replace("</tool_call>", "")
    return "<tool_call>{" + draw(prose) + "}</tool_call>"


fragments = st.one_of(
    prose,
    valid_calls(),
    broken_calls(),
    st.sampled_from(
        [
            "<tool_c",
            "</tool_call>",
            "<think>",
            "</think>",
            "```",
            "```python\nx = {'a': 1}\n```",
            "{",
            "[",
            '{"',
            "'",
            '"',
            "<",
            "<function=",
            "[TOOL_CALLS]",
            "[TOOL_CALLS]f",
            "[ARGS]",
            "</s>",
            "a < b",
            "<b>bold</b>",
            '{"a": 1} is a dict',
            "{}",
        ]
    ),
)
texts = st.lists(fragments, max_size=6).map("".join)
valid_texts = st.lists(
    st.one_of(prose.filter(lambda p: not set(p) & set("<{[`'\"")), valid_calls()), max_size=5
).map("".join)


def result(parser: CallTextParser) -> tuple[str, list[ToolCall], list[Any], str]:
    return parser.text, parser.calls, parser.errors, parser.reasoning


def batch(text: str) -> tuple[str, list[ToolCall], list[Any], str]:
    parsed: ParsedText = parse_text(text)
    return parsed.text, list(parsed.calls), list(parsed.errors), parsed.reasoning


@st.composite
def chunked(draw: st.DrawFn, source: st.SearchStrategy[str]) -> tuple[str, list[str]]:
    text = draw(source)
    cuts = sorted(set(draw(st.lists(st.integers(0, len(text)), max_size=12))))
    bounds = [0, *cuts, len(text)]
    return text, [text[a:b] for a, b in itertools.pairwise(bounds)]


def stream(chunks: list[str]) -> CallTextParser:
    parser = CallTextParser()
    for chunk in chunks:
        parser.feed(chunk)
    parser.close()
    return parser


@SETTINGS
@given(chunked(texts))
def test_any_chunking_gives_the_batch_result(case: tuple[str, list[str]]) -> None:
    text, chunks = case
    assert result(stream(chunks)) == batch(text)


@SETTINGS
@given(texts)
def test_one_character_chunks_give_the_batch_result(text: str) -> None:
    assert result(stream(list(text))) == batch(text)


@SETTINGS
@given(texts)
def test_display_text_is_the_concatenation_of_the_deltas(text: str) -> None:
    parser = CallTextParser()
    events = [*(e for ch in text for e in parser.feed(ch)), *parser.close()]
    assert "".join(e.text for e in events if e.kind == "text_delta") == parser.text
    assert "".join(e.text for e in events if e.kind == "reasoning_delta") == parser.reasoning
    assert [e.call for e in events if isinstance(e, ToolCallParsed)] == parser.calls


@settings(max_examples=120, deadline=None)
@given(valid_texts)
def test_every_prefix_of_a_valid_output_parses_and_never_loses_a_returned_call(text: str) -> None:
    full = parse_text(text)
    assert full.errors == ()
    parser = CallTextParser()
    returned: list[ToolCall] = []
    for end in range(len(text) + 1):
        prefix = parse_text(text[:end])  # a reply cut here: must not raise
        assert list(prefix.calls[: len(returned)]) == returned
        if end < len(text):
            returned += [e.call for e in parser.feed(text[end]) if isinstance(e, ToolCallParsed)]
    assert returned == list(full.calls)
