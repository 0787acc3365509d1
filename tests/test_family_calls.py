"""Calls in model families' own native forms, as conformance cases: each text with the calls,
display text and errors it must parse to, read whole, one character at a time and in chunks.

Mistral's forms are the ones mistral-common's tokenizers decode (v2-v7: `[TOOL_CALLS][{...}]`;
v11+: `[TOOL_CALLS]NAME[ARGS]{...}` per call, or `[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{...}`),
and `[TOOL_CALLS]NAME{...}` is what a server that drops control tokens from the text leaves.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from toolcall_cli.events import ToolCallParsed
from toolcall_cli.strategies.text_parser import CallTextParser, ParsedText, parse_text

CASES: list[dict[str, Any]] = [
    # --- an end-of-turn marker inside a string argument is data -------------------------------
    {
        "id": "mistral-list-end-marker-in-string-no-eos",
        "text": '[TOOL_CALLS][{"name": "write", "arguments": {"text": "a</s>b"}}]',
        "calls": [("write", {"text": "a</s>b"})],
        "content": "",
    },
    {
        "id": "mistral-list-markup-with-end-marker-then-prose",
        "text": '[TOOL_CALLS] [{"name": "write", "arguments": {"html": "<p>x</p></s>"}}] ok',
        "calls": [("write", {"html": "<p>x</p></s>"})],
        "content": " ok",
    },
    {
        "id": "llama-python-tag-eom-in-string-no-eom",
        "text": '<|python_tag|>{"name": "note", "parameters": {"text": "a<|eom_id|>b"}}',
        "calls": [("note", {"text": "a<|eom_id|>b"})],
        "content": "",
    },
    {
        "id": "tool-call-close-tag-in-string-no-close",
        "text": '<tool_call>{"name": "note", "arguments": {"text": "x</tool_call>y"}}',
        "calls": [("note", {"text": "x</tool_call>y"})],
        "content": "",
    },
    {
        # Still a string that never closes: the tag after it is no proof of anything.
        "id": "tool-call-unclosed-string-runs-past-close-tag",
        "text": '<tool_call>{"name": "note", "arguments": {"text": "x}}</tool_call> after',
        "calls": [],
        "content": " after",
        "errors": ["never closed"],
    },
    # --- Mistral v11+: NAME[ARGS]{...}, one marker per call -----------------------------------
    {
        "id": "mistral-v11-one-call",
        "text": '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}',
        "calls": [("get_weather", {"city": "Paris"})],
        "content": "",
    },
    {
        "id": "mistral-v11-two-calls-eos",
        "text": (
            '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}'
            '[TOOL_CALLS]get_time[ARGS]{"zone": "Europe/Paris"}</s>'
        ),
        "calls": [("get_weather", {"city": "Paris"}), ("get_time", {"zone": "Europe/Paris"})],
        "content": "",
    },
    {
        "id": "mistral-v11-call-ids-after-prose-chinese",
        "text": (
            "我来查一下。[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]"
            '{"city": "北京"}[TOOL_CALLS]get_weather[CALL_ID]Zz9Yy8Xx7[ARGS]{"city": "上海"}'
        ),
        "calls": [("get_weather", {"city": "北京"}), ("get_weather", {"city": "上海"})],
        "content": "我来查一下。",
    },
    {
        "id": "mistral-v11-args-token-dropped",
        "text": '[TOOL_CALLS]search{"query": "[ARGS] and [TOOL_CALLS]"}[TOOL_CALLS]f{}',
        "calls": [("search", {"query": "[ARGS] and [TOOL_CALLS]"}), ("f", {})],
        "content": "",
    },
    {
        "id": "mistral-v11-end-marker-and-brackets-in-string",
        "text": '[TOOL_CALLS]write[ARGS]{"text": "[1]</s>[TOOL_CALLS]x"}',
        "calls": [("write", {"text": "[1]</s>[TOOL_CALLS]x"})],
        "content": "",
    },
    {
        "id": "mistral-v11-broken-json-is-an-error-not-text",
        "text": '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"',
        "calls": [],
        "content": "",
        "errors": ["ended inside a tool call"],
    },
    # --- prose that mentions the marker stays prose --------------------------------------------
    {
        "id": "prose-mentions-v11-form",
        "text": "Mistral writes [TOOL_CALLS]name[ARGS] and then the JSON.",
        "calls": [],
        "content": "Mistral writes [TOOL_CALLS]name[ARGS] and then the JSON.",
    },
    {
        "id": "prose-mentions-marker-then-word",
        "text": "Each call starts with [TOOL_CALLS]get_weather, then [ARGS] [1].",
        "calls": [],
        "content": "Each call starts with [TOOL_CALLS]get_weather, then [ARGS] [1].",
    },
    {
        # Without [ARGS], only braces that open a JSON object (a quoted key or `}` next) do.
        "id": "prose-mentions-marker-name-and-braces",
        "text": "Write [TOOL_CALLS]name{json} here, or [TOOL_CALLS]f{ x }.",
        "calls": [],
        "content": "Write [TOOL_CALLS]name{json} here, or [TOOL_CALLS]f{ x }.",
    },
    {
        "id": "mistral-v11-args-token-dropped-space-in-object",
        "text": '[TOOL_CALLS]f{ "a": 1}[TOOL_CALLS]g{ }',
        "calls": [("f", {"a": 1}), ("g", {})],
        "content": "",
    },
    {
        "id": "prose-mentions-marker-at-end",
        "text": "The token is [TOOL_CALLS]name",
        "calls": [],
        "content": "The token is [TOOL_CALLS]name",
    },
]


def streamed(text: str, sizes: list[int]) -> ParsedText:
    parser = CallTextParser()
    start = 0
    for size in sizes:
        parser.feed(text[start : start + size])
        start += size
    if start < len(text):
        parser.feed(text[start:])
    parser.close()
    return ParsedText(parser.text, tuple(parser.calls), tuple(parser.errors), parser.reasoning)


def readings(text: str) -> dict[str, ParsedText]:
    shuffled = random.Random(text)
    return {
        "batch": parse_text(text),
        "chars": streamed(text, [1] * len(text)),
        "twos": streamed(text, [2] * len(text)),
        "sevens": streamed(text, [7] * len(text)),
        "random": streamed(text, [shuffled.randint(1, 6) for _ in text]),
    }


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_family_form_parses_as_expected_whole_and_streamed(case: dict[str, Any]) -> None:
    for how, parsed in readings(case["text"]).items():
        assert [(c.name, c.arguments) for c in parsed.calls] == case["calls"], how
        assert parsed.text == case["content"], how
        expected_errors = case.get("errors", [])
        assert len(parsed.errors) == len(expected_errors), how
        for error, phrase in zip(parsed.errors, expected_errors, strict=True):
            assert phrase in error.message, how


def test_the_first_of_several_mistral_calls_resolves_when_the_next_marker_arrives() -> None:
    # A streamed tool starts as soon as its call is whole: the next [TOOL_CALLS] shows it is.
    first = '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}'
    parser = CallTextParser()
    events = [e for ch in first + "[TOOL_CALLS]" for e in parser.feed(ch)]
    seen = [e.call for e in events if isinstance(e, ToolCallParsed)]
    assert [(c.name, c.raw) for c in seen] == [("get_weather", first)]
