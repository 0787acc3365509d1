"""The battery of kata stream: a `StreamParser` fed every reply of the text cases in its own
chunks and one character at a time, plus what only streaming can get wrong: text held back
too long, a call returned late, a reply so long that re-scanning the buffer for every chunk
runs out of time."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolcall_cli.kata._battery import (
    Battery,
    Case,
    Solution,
    Verdict,
    agree,
    canonical,
    normal_space,
    shown,
)
from toolcall_cli.kata._text_cases import BUILT_IN, Reply, fault_replies, real_replies

LONG_REPLY_CHARS = 600_000
"""A call this long, fed one character at a time, takes a parser that looks at each character
a bounded number of times a second or two; one that searches its whole buffer again for every
chunk needs half a minute or more, even on a fast idle machine. (At 300,000 characters such a
parser finished within the limit on an idle 2-core machine: the case must fail it anywhere.)"""
LONG_REPLY_SECONDS = 10.0


def battery(conformance: Path | None) -> Battery:
    faults, coverage = fault_replies()
    real, note = real_replies(conformance)
    cases = [case(reply) for reply in (*BUILT_IN, *faults, *real)]
    cases += STREAMING
    return Battery(tuple(cases), note, coverage)


@dataclass(frozen=True)
class Fed:
    """What a parser returned, feed by feed, for one chunking of a reply."""

    per_feed: list[list[dict[str, Any]]]
    """The events of each feed(), then those of close() last."""

    @property
    def events(self) -> list[dict[str, Any]]:
        return [event for events in self.per_feed for event in events]

    @property
    def texts(self) -> list[str]:
        """The display text of each feed, then of close()."""
        return [text_of(events) for events in self.per_feed]

    def reading(self, with_errors: bool) -> dict[str, Any]:
        events = self.events
        found: dict[str, Any] = {
            "calls": [
                {"name": e.get("name"), "arguments": e.get("arguments")}
                for e in events
                if e.get("type") == "call"
            ],
            "text": normal_space(text_of(events)),
        }
        if with_errors:
            found["errors"] = sum(1 for e in events if e.get("type") == "error")
        return found


def text_of(events: list[dict[str, Any]]) -> str:
    return "".join(str(e.get("text", "")) for e in events if e.get("type") == "text")


def feed(solution: Solution, chunks: Sequence[str]) -> Fed:
    """One parser fed `chunks`, then closed."""
    steps = [("new",), *(("feed", 0, chunk) for chunk in chunks), ("close", 0)]
    returned = solution.parsers(steps)
    return Fed([as_events(value) for value in returned[1:]])


class NotEvents(Exception):
    """feed() or close() returned something other than a list of event dicts."""


KINDS = {"text": "text", "call": "name", "error": "error"}


def as_events(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise NotEvents(f"feed() and close() must return a list of events, not {shown(value)}")
    for event in value:
        if not isinstance(event, dict) or event.get("type") not in KINDS:
            raise NotEvents(
                f'an event must be a dict with "type" text, call or error: {shown(event)}'
            )
        field = KINDS[event["type"]]
        if field not in event or (event["type"] != "call" and not isinstance(event[field], str)):
            raise NotEvents(f"a {event['type']} event needs {field!r}: {shown(event)}")
    return value


def case(reply: Reply) -> Case:
    def check(solution: Solution) -> Verdict:
        expected: dict[str, Any] = {"calls": list(reply.calls)}
        if reply.text is not None:
            expected["text"] = normal_space(reply.text)
        if reply.errors is not None:
            expected["errors"] = reply.errors
        chunkings = {
            "as streamed": list(reply.chunks),
            "one character at a time": list(reply.whole),
        }
        for how, chunks in chunkings.items():
            try:
                found = feed(solution, chunks).reading(reply.errors is not None)
            except NotEvents as error:
                return Verdict(False, shown(expected), str(error))
            found = {k: v for k, v in found.items() if k in expected}
            if canonical(found) != canonical(expected):
                return Verdict(False, shown(expected), f"fed {how}: {shown(found)}")
        return Verdict(True)

    return Case(reply.category, reply.source, reply.name, check, given=shown(list(reply.chunks)))


# --- what only streaming can get wrong -------------------------------------------------------


def streaming(
    name: str, category: str = "streaming", time_limit: float | None = None
) -> Callable[[Callable[[Solution], Verdict]], Case]:
    def make(check: Callable[[Solution], Verdict]) -> Case:
        return Case(category, "built-in", name, check, time_limit)

    return make


@streaming("prose goes out with the chunk that brought it")
def text_early(solution: Solution) -> Verdict:
    chunks = ["The weather ", "in Paris ", "is sunny."]
    expected = [*chunks, ""]
    got = feed(solution, chunks).texts
    return agree(expected, got)


@streaming("a tag split across chunks is held back, then read")
def split_opener(solution: Solution) -> Verdict:
    chunks = [
        "Checking <tool_",
        'call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool',
        "_call> done",
    ]
    fed = feed(solution, chunks)
    got = {
        "text": fed.texts,
        "calls per feed": [sum(e.get("type") == "call" for e in events) for events in fed.per_feed],
    }
    expected = {"text": ["Checking ", "", " done", ""], "calls per feed": [0, 0, 1, 0]}
    return agree(expected, got)


@streaming("a call is returned by the feed that completes it")
def call_on_time(solution: Solution) -> Verdict:
    chunks = [
        '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>',
        "\nAnd more text",
        " to come.",
    ]
    fed = feed(solution, chunks)
    got = [[e.get("name") for e in events if e.get("type") == "call"] for events in fed.per_feed]
    expected = [["get_time"], [], [], []]
    return agree(expected, got)


@streaming("what might be a tag at the end is shown at close()")
def partial_at_end(solution: Solution) -> Verdict:
    return agree(["See ", "<tool_c"], feed(solution, ["See <tool_c"]).texts)


@streaming("two parsers keep their own state")
def separate_state(solution: Solution) -> Verdict:
    steps = [
        ("new",),
        ("new",),
        ("feed", 0, '<tool_call>{"name": "a", '),
        ("feed", 1, "plain text"),
    ]
    returned = solution.parsers([*steps, ("close", 1)])
    got = text_of(as_events(returned[3]) + as_events(returned[4]))
    return Verdict(got == "plain text", shown("plain text"), shown(got))


@streaming(
    f"a {LONG_REPLY_CHARS:,}-character call fed one character at a time",
    "long reply",
    LONG_REPLY_SECONDS,
)
def long_reply(solution: Solution) -> Verdict:
    content = "All work and no play makes Jack a dull boy. " * (LONG_REPLY_CHARS // 44)
    text = (
        f'<tool_call>{{"name": "write_file", "arguments": {{"content": "{content}"}}}}</tool_call>'
    )
    expected = {"calls": [{"name": "write_file", "arguments": {"content": content}}], "text": ""}
    found = feed(solution, list(text)).reading(with_errors=False)
    return agree(expected, found)


STREAMING: tuple[Case, ...] = (
    text_early,
    split_opener,
    call_on_time,
    partial_at_end,
    separate_state,
    long_reply,
)
