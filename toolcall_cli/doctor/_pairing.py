"""Step 3: was every result fed back and paired with its call id, every call answered once?

Each round's calls (parsed, or unreadable and answered with an error) are matched against what
`fed_back` says went back, and that against the next request: native `tool` messages by
`tool_call_id` after an assistant message carrying that id, or the text protocol's
`<tool_result id="...">` blocks.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

from toolcall_cli.doctor._model import Finding, Record, RunRecords, Step
from toolcall_cli.wording import plural

QUESTION = "Was every result fed back once, paired with its call id?"

_RESULT_ID = re.compile(r'<tool_result\s+id="([^"]*)"')
_CAPPED = "past the cap of"
_SUMMARISED = "summar"
"""Notices saying older rounds went as a summary: then results are not in the request as sent."""

Made = tuple[str, Record]
"""A call of a round: its id, and the record that made it."""


def check_pairing(run: RunRecords) -> Step:
    rounds = sorted({r.iteration for r in run.of("tool_call_parsed", "parse_error") if r.iteration})
    findings: list[Finding] = []
    calls = 0
    for iteration in rounds:
        made = _calls(run, iteration)
        calls += len(made)
        findings.extend(_round(run, iteration, made))
    problems = [f for f in findings if not f.note]
    if not calls:
        summary = "nothing to pair: no calls were made"
    elif not problems:
        summary = (
            f"yes: {plural(calls, 'call')} in {plural(len(rounds), 'round')}, "
            "each answered once, by its id"
        )
    else:
        summary = f"no: {plural(len(problems), 'problem')} in feeding results back"
    return Step(3, QUESTION, summary, tuple(findings))


def _calls(run: RunRecords, iteration: int) -> list[Made]:
    """(call id, the record that made it) for the round, in the order the model made them."""
    made = []
    for record in run.of("tool_call_parsed", "parse_error"):
        if record.iteration == iteration:
            call = record.data.get("call")
            call_id = call.get("id") if isinstance(call, dict) else record.data.get("call_id")
            made.append((str(call_id), record))
    return made


def _round(run: RunRecords, iteration: int, made: list[Made]) -> Iterator[Finding]:
    if _after_limit(run, _request(run, iteration)):
        return  # the best-effort request at the limit: its calls are shown, never run
    yield from _twins(made)
    yield from _results_twice(run, iteration, made)
    fed = next((r for r in run.of("fed_back") if r.iteration == iteration), None)
    if fed is None:
        yield from _never_fed(run, iteration, made)
        return
    sent = Counter(_fed_ids(fed.data.get("messages") or []))
    yield from _unanswered(run, iteration, made, sent, fed)
    ids = {call_id for call_id, _ in made}
    for call_id in sent:
        if call_id not in ids:
            message = f"a result was fed back for {call_id!r}, an id no call of the round has"
            yield Finding.at(fed, "orphan_result", message)
    yield from _next_request(run, iteration, fed, [c for c in sent if c in ids])


def _unanswered(
    run: RunRecords, iteration: int, made: list[Made], sent: Counter[str], fed: Record
) -> Iterator[Finding]:
    """Calls with no result, or more than one, in what was fed back."""
    notices = [str(n.data.get("message", "")) for n in run.of("notice") if n.iteration == iteration]
    capped = any(_CAPPED in notice for notice in notices)
    for call_id, record in made:
        name = _name(record)
        if sent[call_id] == 0 and capped:
            message = f"{call_id} ({name}) was dropped: past --max-calls-per-reply"
            told = "the model was told in one note"
            yield Finding.at(record, "dropped", message, recovered=told)
        elif sent[call_id] == 0:
            message = f"{call_id} ({name}) has no result among those fed back"
            yield Finding.at(record, "not_fed_back", message)
        elif sent[call_id] > 1:
            message = f"{call_id} ({name}) was answered {sent[call_id]} times in one feedback"
            yield Finding.at(fed, "answered_twice", message)


def _request(run: RunRecords, iteration: int) -> Record | None:
    return next((r for r in run.of("iteration_started") if r.iteration == iteration), None)


def _after_limit(run: RunRecords, started: Record | None) -> bool:
    limit = run.first("limit_reached")
    return started is not None and limit is not None and limit.event < started.event


def _name(record: Record) -> str:
    call = record.data.get("call")
    return f"`{call.get('name')}`" if isinstance(call, dict) else "an unreadable call"


def _twins(made: list[Made]) -> Iterator[Finding]:
    for call_id, count in Counter(call_id for call_id, _ in made).items():
        if count > 1:
            record = next(r for c, r in made if c == call_id)
            message = (
                f"{count} calls of one reply share the id {call_id!r}: results cannot be told apart"
            )
            yield Finding.at(record, "duplicate_id", message)


def _results_twice(run: RunRecords, iteration: int, made: list[Made]) -> Iterator[Finding]:
    finished = Counter(
        str((r.data.get("result") or {}).get("call_id"))
        for r in run.of("tool_finished")
        if r.iteration == iteration
    )
    for call_id, record in made:
        if finished[call_id] > 1:
            message = f"{call_id} ({_name(record)}) got {finished[call_id]} results"
            yield Finding.at(record, "answered_twice", message)


def _never_fed(run: RunRecords, iteration: int, made: list[Made]) -> Iterator[Finding]:
    first = made[0][1]
    went_on = any(r.iteration > iteration for r in run.of("iteration_started") if r.iteration)
    if went_on:
        message = f"iteration {iteration}'s results were never fed back, yet the run went on"
        yield Finding.at(first, "not_fed_back", message)
    else:
        message = (
            f"iteration {iteration}'s results were not fed back: the run stopped first (step 4)"
        )
        yield Finding.at(first, "not_fed_back", message, note=True)


def _fed_ids(messages: list[Any]) -> Iterator[str]:
    """The call ids the fed-back messages answer: native `tool_call_id`s, or the text
    protocol's result blocks."""
    for message in messages:
        if not isinstance(message, dict):
            continue
        if message.get("role") == "tool":
            yield str(message.get("tool_call_id"))
        elif isinstance(message.get("content"), str):
            yield from _RESULT_ID.findall(message["content"])


def _next_request(
    run: RunRecords, iteration: int, fed: Record, ids: list[str]
) -> Iterator[Finding]:
    """The results fed back must be in the next request, each with its call (native)."""
    following = _request(run, iteration + 1)
    if following is None or not ids or _summarised(run, fed, following):
        return
    messages = _messages(following)
    answered = Counter(_fed_ids(messages))
    asked = _asked_ids(messages)
    native = any(m.get("role") == "tool" for m in messages)
    for call_id in ids:
        if answered[call_id] == 0:
            message = f"{call_id}'s result was fed back, but the next request does not hold it"
            yield Finding.at(following, "not_sent", message)
        elif native and call_id not in asked:
            message = (
                f"in the request of iteration {iteration + 1}, the result for {call_id} follows "
                "no assistant tool call with that id"
            )
            yield Finding.at(following, "unpaired", message)


def _summarised(run: RunRecords, fed: Record, following: Record) -> bool:
    """Whether the rounds went as a summary before the next request (tools withdrawn, the
    limit reached, history summarised): then it holds no call ids to pair."""
    between = [r for r in run.records if fed.event < r.event < following.event]
    if any(r.kind in ("answer_without_tools", "limit_reached") for r in between):
        return True
    notices = (str(r.data.get("message", "")) for r in between if r.kind == "notice")
    return any(_SUMMARISED in notice for notice in notices)


def _messages(request: Record) -> list[dict[str, Any]]:
    sent = (request.data.get("request") or {}).get("messages") or []
    return [m for m in sent if isinstance(m, dict)]


def _asked_ids(messages: list[dict[str, Any]]) -> set[str]:
    """The call ids the assistant messages carry (native tool calls)."""
    return {
        str(call.get("id"))
        for m in messages
        if m.get("role") == "assistant"
        for call in m.get("tool_calls") or []
        if isinstance(call, dict)
    }
