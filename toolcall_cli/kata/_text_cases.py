"""The replies the two parser katas (parse, stream) are graded on, with what each should give:
written here, written by the offline model with each fault, and real models' from the
conformance corpus. One list serves both katas: a stream parser fed a reply in any chunking
must read it as the batch parser does."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolcall_cli.kata._battery import Source
from toolcall_cli.kata._conformance import tagged_outputs
from toolcall_cli.kata._offline import FAULT_CATEGORY, kinds_for, question_for, text_replies
from toolcall_cli.strategies.text_parser import parse_text

Call = dict[str, Any]


@dataclass(frozen=True)
class Reply:
    """One model reply and its reading."""

    category: str
    source: Source
    name: str
    chunks: tuple[str, ...]
    """How it arrived (the stream kata feeds these; the parse kata reads them joined)."""
    calls: tuple[Call, ...]
    errors: int | None
    """How many calls cannot be read; None when the source does not say."""
    text: str | None
    """The display text, whitespace aside; None when the source does not say."""

    @property
    def whole(self) -> str:
        return "".join(self.chunks)


def call(name: str, **arguments: Any) -> Call:
    return {"name": name, "arguments": arguments}


PARIS = call("get_weather", city="Paris")
TOKYO = call("get_weather", city="Tokyo")


def tagged(payload: str) -> str:
    return f"<tool_call>{payload}</tool_call>"


def written(
    category: str,
    name: str,
    text: str,
    calls: tuple[Call, ...] = (),
    errors: int = 0,
    shown: str | None = None,
) -> Reply:
    """A reply written here; `shown` is its display text (by default: none when it has calls,
    all of it when it has none)."""
    display = shown if shown is not None else ("" if calls or errors else text)
    return Reply(category, "built-in", name, (text,), calls, errors, display)


PARIS_JSON = '{"name": "get_weather", "arguments": {"city": "Paris"}}'

BUILT_IN: tuple[Reply, ...] = (
    written("single call", "one call", tagged(PARIS_JSON), (PARIS,)),
    written(
        "single call",
        "newlines around the JSON",
        f"<tool_call>\n  {PARIS_JSON}\n</tool_call>",
        (PARIS,),
    ),
    written("single call", "no arguments key", tagged('{"name": "get_time"}'), (call("get_time"),)),
    written(
        "single call",
        '"parameters" for "arguments"',
        tagged('{"name": "get_weather", "parameters": {"city": "Paris"}}'),
        (PARIS,),
    ),
    written(
        "single call",
        "arguments as a JSON string",
        tagged('{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}'),
        (PARIS,),
    ),
    written(
        "single call",
        "nested and unicode arguments",
        tagged(
            '{"name": "plan", "arguments": '
            '{"stops": [{"city": "北京", "days": 2}], "note": "naïve ☕"}}'
        ),
        (call("plan", stops=[{"city": "北京", "days": 2}], note="naïve ☕"),),
    ),
    written(
        "several calls",
        "two calls",
        tagged(PARIS_JSON)
        + "\n"
        + tagged('{"name": "get_weather", "arguments": {"city": "Tokyo"}}'),
        (PARIS, TOKYO),
    ),
    written(
        "several calls",
        "three calls, no space between",
        tagged(PARIS_JSON) * 2 + tagged('{"name": "get_time", "arguments": {}}'),
        (PARIS, PARIS, call("get_time")),
    ),
    written(
        "prose around",
        "prose before and after",
        f"Let me look that up.\n{tagged(PARIS_JSON)}\nOne moment.",
        (PARIS,),
        shown="Let me look that up. One moment.",
    ),
    written(
        "prose around",
        "a JSON object in prose is no call",
        'The format is {"name": "x"} - nothing to run.',
    ),
    written(
        "prose around", "markup in prose is prose", "Use <b>bold</b> and a < b > c, or `code`."
    ),
    written("no call", "plain answer", "Paris is sunny today, 21°C."),
    written("no call", "empty reply", ""),
    written(
        "strings",
        "a closing tag inside a string",
        tagged('{"name": "search", "arguments": {"q": "what does </tool_call> mean?"}}'),
        (call("search", q="what does </tool_call> mean?"),),
    ),
    written(
        "strings",
        "braces and escapes in strings",
        tagged('{"name": "echo", "arguments": {"text": "{\\"a\\": \\"}\\"} \\\\ end"}}'),
        (call("echo", text='{"a": "}"} \\ end'),),
    ),
    written(
        "broken JSON",
        "single quotes",
        tagged("{'name': 'get_weather', 'arguments': {'city': 'Paris'}}"),
        (PARIS,),
    ),
    written(
        "broken JSON",
        "single quotes around an apostrophe",
        tagged("{'name': 'say', 'arguments': {'text': 'it\\'s \"fine\"'}}"),
        (call("say", text='it\'s "fine"'),),
    ),
    written(
        "broken JSON",
        "trailing commas",
        tagged('{"name": "get_weather", "arguments": {"city": "Paris",},}'),
        (PARIS,),
    ),
    written(
        "broken JSON",
        "unquoted keys",
        tagged('{name: "get_weather", arguments: {city: "Paris"}}'),
        (PARIS,),
    ),
    written("broken JSON", "not JSON at all", tagged("get_weather(city=Paris)"), errors=1),
    written("broken JSON", "no name", tagged('{"arguments": {"city": "Paris"}}'), errors=1),
    written(
        "broken JSON",
        "one broken call among good ones",
        tagged(PARIS_JSON) + tagged('{"name": "get_weather", "arguments": {"city": "To"kyo"}}'),
        (PARIS,),
        errors=1,
    ),
    written(
        "cut off",
        "cut off inside the arguments",
        'Checking.\n<tool_call>{"name": "get_weather", "arguments": {"ci',
        errors=1,
        shown="Checking.",
    ),
    written(
        "cut off",
        "cut off right after the tag",
        "Checking.\n<tool_call>",
        errors=1,
        shown="Checking.",
    ),
    written(
        "missing close tag", "whole JSON, no closing tag", f"<tool_call>{PARIS_JSON}", (PARIS,)
    ),
    written(
        "missing close tag",
        "closed call, then an unclosed one",
        tagged(PARIS_JSON) + "\n<tool_call>" + PARIS_JSON.replace("Paris", "Tokyo"),
        (PARIS, TOKYO),
    ),
    written(
        "code fence",
        "a ```json block",
        f"Sure.\n```json\n{PARIS_JSON}\n```",
        (PARIS,),
        shown="Sure.",
    ),
    written("code fence", "a bare ``` block", f"```\n{PARIS_JSON}\n```", (PARIS,)),
    written("code fence", "a code block that is no call", "Run this:\n```python\nprint('hi')\n```"),
)


def reading(category: str, source: Source, name: str, chunks: list[str]) -> Reply:
    """A reply with toolcall's own parser's reading as what it should give (where the katas'
    rules and toolcall's agree: the checker's tests hold the reference solutions to it)."""
    parsed = parse_text("".join(chunks))
    calls = tuple({"name": c.name, "arguments": c.arguments} for c in parsed.calls)
    return Reply(category, source, name, tuple(chunks), calls, len(parsed.errors), parsed.text)


def fault_replies() -> tuple[list[Reply], str]:
    """Every reply of a run per text-protocol fault kind (and of runs without faults), with a
    line saying which kinds are covered."""
    kinds, others = kinds_for("text")
    found: list[Reply] = []
    for question in (TWO_CITIES_ZH, "What is 17 * 23, and the weather in London?"):
        for n, chunks in enumerate(text_replies(None, question), 1):
            count = len(parse_text("".join(chunks)).calls)
            category = "no call" if not count else "single call" if count == 1 else "several calls"
            found.append(
                reading(category, "offline faults", f"no fault, {question!r}, reply {n}", chunks)
            )
    for kind in kinds:
        seen: set[str] = set()
        for n, chunks in enumerate(text_replies(kind, question_for(kind)), 1):
            text = "".join(chunks)
            parsed = parse_text(text)
            if text in seen or not (parsed.calls or parsed.errors or kind == "no_tool"):
                continue  # the final answer after the fault was dealt with: nothing new
            seen.add(text)
            found.append(
                reading(
                    FAULT_CATEGORY.get(kind, kind), "offline faults", f"{kind}, reply {n}", chunks
                )
            )
    coverage = f"offline fault kinds: {', '.join(kinds)}"
    if others:
        coverage += (
            f" (not {', '.join(others)}: the text protocol never shows them; kata loop meets them)"
        )
    return found, coverage


TWO_CITIES_ZH = "北京和上海今天天气怎么样？"

CORPUS_CATEGORY: tuple[tuple[str, str], ...] = (
    ("truncated", "cut off"),
    ("missing_close_tag", "missing close tag"),
    ("malformed_reject", "broken JSON"),
    ("malformed_repair", "broken JSON"),
    ("single_quotes", "broken JSON"),
    ("split_tag", "split tags"),
    ("streaming", "split tags"),
    ("code_fence", "code fence"),
    ("tag_in_string", "strings"),
    ("braces_in_strings", "strings"),
    ("string_escapes", "strings"),
    ("multiple_calls", "several calls"),
    ("prose_before", "prose around"),
    ("prose_after", "prose around"),
    ("no_call", "no call"),
)
"""The corpus's own categories, first match first, as the katas' categories."""


def real_replies(folder: Path | None) -> tuple[list[Reply], str]:
    """The conformance corpus's tagged replies (fed in their own chunks when the source gives
    them), with what their sources expect, and a line saying where they came from."""
    chosen, note = tagged_outputs(folder)
    found = []
    for record in chosen:
        categories = set(record.get("categories", ()))
        category = next(
            (mine for theirs, mine in CORPUS_CATEGORY if theirs in categories), "single call"
        )
        chunks = record.get("chunks") or [record["text"]]
        calls = tuple(json.loads(json.dumps(c)) for c in record["expected_calls"])
        found.append(
            Reply(
                category,
                "real outputs",
                str(record["id"]),
                tuple(chunks),
                calls,
                None,
                record.get("expected_content"),
            )
        )
    return found, note
