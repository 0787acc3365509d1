"""Step 2: were the tool names and arguments valid, and how was each error recovered?

Every call the engine had to refuse, repair, convert or read leniently is a finding at its
iteration, with the later call that put it right (if one did).
"""

from __future__ import annotations

import difflib
import itertools
import json
import re
from collections.abc import Iterator
from typing import Any

from toolcall_cli.doctor._model import Finding, Record, RunRecords, Step
from toolcall_cli.feedback import ARGUMENT_KINDS, Problem, problem_from_record, said
from toolcall_cli.strategies.text_prompt import CALL_CLOSE, CALL_OPEN, unclosed
from toolcall_cli.wording import plural

QUESTION = "Were tool names and arguments valid; how was each error recovered?"

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NAME_IN_RAW = re.compile(r"""["']?name["']?\s*:\s*["']([^"']+)["']""")
_CONTENT_CALLS = "the model wrote its tool call as JSON text in its content"
_NOTE_KINDS = frozenset({"declined"})
"""Error results that are the user's choice, not the model's mistake."""
_ECHOED = "repeated"
"""The error kind of a call refused because its arguments held a result the model already had
(the result written back into its call, or passed on to a tool as it came)."""
_FROM_RESULT = "from_result"
"""The error kind of a call refused because it was copied from a tool result: reported with
the `call_from_result` record that says which result."""


def check_calls(run: RunRecords) -> Step:
    findings = sorted(
        [
            *refused_calls(run),
            *calls_from_results(run),
            *ungrounded_arguments(run),
            *unreadable_calls(run),
            *calls_not_read(run),
            *repaired_calls(run),
            *converted_arguments(run),
            *loose_framing(run),
            *content_calls(run),
            *split_tags(run),
        ],
        key=lambda f: f.event or 0,
    )
    calls = len(run.of("tool_call_parsed", "parse_error", "reply_not_read"))
    problems = [f for f in findings if not f.note]
    if not calls:
        summary = "nothing to check: no calls were made"
    elif not problems:
        summary = f"yes: {plural(calls, 'call')}, every name and argument valid"
    else:
        fixed = sum(1 for f in problems if f.recovered)
        summary = f"no: {plural(len(problems), 'problem')}, {fixed} put right"
    return Step(2, QUESTION, summary, tuple(findings))


def call_of(record: Record) -> dict[str, Any]:
    call = record.data.get("call")
    return call if isinstance(call, dict) else {}


def fixed_later(run: RunRecords, after: Record, tool: str | None) -> str | None:
    """How a successful call in a later reply (of `tool`, when known) put the mistake right.
    A sibling call of the same reply is no fix: the model had not yet seen the error; nor is
    a call that ran with a figure from nowhere (the refused call, sent again unchanged)."""
    # By iteration and id: native ids are the model's, and call_0 may come again in a later reply.
    made_up = {
        (f.iteration, call_of(f).get("id"))
        for f in run.of("grounding_checked")
        if _ran_ungrounded(f)
    }
    for record in run.of("tool_finished"):
        result, call = record.data.get("result") or {}, call_of(record)
        later = (record.iteration or 0) > (after.iteration or 0)
        if (record.iteration, call.get("id")) in made_up:
            continue
        if later and result.get("ok") and tool in (None, call.get("name")):
            return f"fixed at iteration {record.iteration} by {call.get('id')} ({call.get('name')})"
    return None


def mistake(
    run: RunRecords, record: Record, problem: str, message: str, tool: str | None, **more: Any
) -> Finding:
    """A mistake of the model's, with the later call of `tool` that put it right (if one did)."""
    recovered = fixed_later(run, record, tool)
    return Finding.at(
        record, problem, message, fixable=True, recovered=recovered, tool=tool, **more
    )


def clipped(text: str, chars: int) -> str:
    """`text`, cut to `chars` with `...` when longer."""
    return text if len(text) <= chars else text[: chars - 3] + "..."


def shown(call: dict[str, Any]) -> str:
    """`name({"arg": ...})`, cut to a line."""
    try:
        arguments = json.dumps(call.get("arguments"), ensure_ascii=False)
    except (TypeError, ValueError):
        arguments = repr(call.get("arguments"))
    return clipped(f"{call.get('name')}({arguments})", 80)


def refused_calls(run: RunRecords) -> Iterator[Finding]:
    """Calls the engine answered with an error: unknown tools, bad arguments, failed tools."""
    tools = [str(name) for name in run.started.get("tools") or []]
    for record in run.of("tool_finished"):
        result, call = record.data.get("result") or {}, call_of(record)
        if result.get("ok", True):
            continue
        kind = str(result.get("error_kind") or "tool_error")
        name = str(call.get("name"))
        content = str(result.get("content", ""))
        if kind == _FROM_RESULT:
            continue  # see calls_from_results
        if kind == _ECHOED:
            yield _echoed(run, record, call, first_line(content))
            continue
        if kind == "unknown_tool":
            intended = meant_tool(name, problems_of(result), tools)
            hint = f" (meant `{intended}`?)" if intended else ""
            message = f"{call.get('id')}: unknown tool `{name}`{hint}, in {shown(call)}"
            yield mistake(run, record, kind, message, intended)
        elif kind == "invalid_arguments":
            why = reasons(problems_of(result)) or first_line(content)
            message = f"{call.get('id')}: invalid arguments in {shown(call)}: {why}"
            yield mistake(run, record, kind, message, name)
        else:
            code = "tool_timeout" if kind == "timeout" else kind
            message = f"{call.get('id')}: `{name}` gave an error ({kind}): {first_line(content)}"
            yield mistake(run, record, code, message, name, note=kind in _NOTE_KINDS)


def _echoed(run: RunRecords, record: Record, call: dict[str, Any], why: str) -> Finding:
    """A call that carried a result the model already had: no tool's policy and no user refused
    it, the model did not use what it had. Put right by an answer, not by a later call."""
    name = str(call.get("name"))
    message = f"{call.get('id')}: `{name}` was sent a result the model already had: {why}"
    recovered = "the run still answered" if run.answered else None
    return Finding.at(
        record, "echoed_result", message, fixable=True, recovered=recovered, tool=name
    )


def calls_from_results(run: RunRecords) -> Iterator[Finding]:
    """Calls the model made that appear in an earlier tool result: a page or file the tool
    read may have written them (prompt injection). Each with the result, and what became of
    the call."""
    for record in run.of("call_from_result"):
        call = call_of(record)
        source = str(record.data.get("result_name"))
        where = f"{source} {record.data.get('result_id')}"
        message = (
            f"{call.get('id')}: {shown(call)} appears in the result of {where} "
            f"(prompt injection?): {_what_became_of(run, record, call.get('id'))}"
        )
        yield Finding.at(record, _FROM_RESULT, message, tool=source)


def _what_became_of(run: RunRecords, after: Record, call_id: Any) -> str:
    for record in run.of("tool_finished"):
        result = record.data.get("result") or {}
        if record.event > after.event and call_of(record).get("id") == call_id:
            if result.get("ok"):
                return "it ran, with the user's approval"
            if result.get("error_kind") == _FROM_RESULT:
                return "not run: nobody could approve it (--yes does not cover it)"
            if result.get("error_kind") == "declined":
                return "not run: the user declined it"
            return f"not run ({result.get('error_kind')})"
    return "no result recorded"


def meant_tool(name: str, problems: list[Problem], tools: list[str]) -> str | None:
    """The tool a call to an unknown one meant: the closest the engine named, else the
    closest of the run's tools."""
    named = next((p.closest for p in problems if p.closest), "")
    close = difflib.get_close_matches(name, tools, n=1)
    return named or (close[0] if close else None)


def problems_of(result: dict[str, Any]) -> list[Problem]:
    """What was wrong with a call, as the engine recorded it."""
    found = map(problem_from_record, result.get("problems") or [])
    return [problem for problem in found if problem is not None]


def reasons(problems: list[Problem]) -> str:
    """What was wrong with the arguments, on one line."""
    return "; ".join(said(p) for p in problems if p.kind in ARGUMENT_KINDS)


def first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return clipped(line.removeprefix("Error: "), 160)


_RAN_UNGROUNDED = {
    "warned": "not put right: the call ran with it (--grounding warn only shows it)",
    "ran_on_repeat": "not put right: sent again unchanged, the call ran with it",
}
"""What became of a call whose figures came from nowhere and that ran anyway. A call refused
for them (--grounding check) is an error result, found by refused_calls."""


def _ran_ungrounded(record: Record) -> bool:
    """A grounding_checked record of a call that ran with a figure from nowhere."""
    action = str(record.data.get("action"))
    return record.data.get("what") == "arguments" and action in _RAN_UNGROUNDED


def ungrounded_arguments(run: RunRecords) -> Iterator[Finding]:
    """Calls that ran with figures in neither the question nor any result: a name and
    arguments can each be valid while a value is made up, and the answer built on it is wrong
    (value=25 for "Paris in Fahrenheit", before the weather was asked)."""
    for record in run.of("grounding_checked"):
        if not _ran_ungrounded(record):
            continue
        outcome = _RAN_UNGROUNDED[str(record.data.get("action"))]
        call = call_of(record)
        figures = ", ".join(map(str, record.data.get("figures") or []))
        message = (
            f"{call.get('id')}: {figures} in {shown(call)} is in neither the question nor any "
            f"result: {outcome}"
        )
        yield Finding.at(record, "ungrounded", message, tool=str(call.get("name")))


def unreadable_calls(run: RunRecords) -> Iterator[Finding]:
    """Call text the parser could not turn into a call (it was fed back as an error)."""
    for record in run.of("parse_error"):
        data = record.data
        raw, message = str(data.get("raw", "")), str(data.get("message", ""))
        named = _NAME_IN_RAW.search(raw) or re.search(r"`([^`]+)`", message)
        tool = named.group(1) if named else None
        if data.get("truncated"):
            problem = "truncated"
            text = (
                f"{data.get('call_id')}: the reply was cut off inside a call "
                "(finish_reason length: out of tokens), so it could not be read"
            )
        else:
            problem = "parse_error"
            text = f"{data.get('call_id')}: a call could not be read: {first_line(message)}"
        yield mistake(run, record, problem, text, tool)


def calls_not_read(run: RunRecords) -> Iterator[Finding]:
    """Replies whose calls the model's own server could not read (told to the model)."""
    for record in run.of("reply_not_read"):
        said = first_line(str(record.data.get("said", ""))) or "no reason given"
        text = f"the server could not read the model's reply as a tool call: {said}"
        yield mistake(run, record, "reply_not_read", text, None)


def repaired_calls(run: RunRecords) -> Iterator[Finding]:
    """Calls whose JSON was not strict and was read by json-repair."""
    for record in run.of("tool_call_parsed"):
        call = call_of(record)
        if not call.get("repaired"):
            continue
        defects = ", ".join(json_defects(str(call.get("raw", "")))) or "not strict JSON"
        message = f"{call.get('id')}: the call's JSON was loose ({defects}): {shown(call)}"
        done = f"repaired by toolcall (json-repair); {_what_became(run, record)}"
        yield Finding.at(
            record, "repaired_json", message, recovered=done, tool=str(call.get("name"))
        )


def json_defects(raw: str) -> list[str]:
    """What made the call's JSON loose, as far as can be told from its text."""
    bare = _STRING.sub('""', raw)  # what is inside strings is the model's data, not its syntax
    found = []
    if re.search(r"[{,:\[]\s*'", bare):
        found.append("single quotes")
    if re.search(r",\s*[}\]]", bare):
        found.append("trailing comma")
    if re.search(r"[{,]\s*[A-Za-z_][\w-]*\s*:", bare):
        found.append("unquoted keys")
    return found


LEFT_OUT = "does not take it"
"""How a note on an argument the engine left out ends (`round` left out: calculate does not
take it)."""


def converted_arguments(run: RunRecords) -> Iterator[Finding]:
    """Arguments of the wrong type that the engine converted before validating them."""
    for record in run.of("tool_finished"):
        result, call = record.data.get("result") or {}, call_of(record)
        notes = [str(note) for note in result.get("coerced") or []]
        left_out = [note for note in notes if note.endswith(LEFT_OUT)]
        converted = [note for note in notes if note not in left_out]
        tool = str(call.get("name"))
        if converted:
            message = (
                f"{call.get('id')}: wrong argument type in {shown(call)}: {'; '.join(converted)}"
            )
            done = "converted by toolcall before validation; the call ran"
            yield Finding.at(record, "coerced", message, recovered=done, tool=tool)
        if left_out:
            message = (
                f"{call.get('id')}: unexpected argument in {shown(call)}: {'; '.join(left_out)}"
            )
            done = "left out by toolcall; the call ran without it"
            yield Finding.at(record, "invalid_arguments", message, recovered=done, tool=tool)


def loose_framing(run: RunRecords) -> Iterator[Finding]:
    """Text-protocol calls read leniently: unclosed, fenced or bare, or followed by more talk."""
    for record in run.of("tool_call_parsed"):
        call = call_of(record)
        raw = str(call.get("raw", "")).strip()
        name = str(call.get("name"))
        lenient = f"read leniently; {_what_became(run, record)}"
        if unclosed(raw):
            message = f"{call.get('id')}: no closing {CALL_CLOSE}"
            yield Finding.at(record, "call_format", message, recovered=lenient, tool=name)
        elif raw and not raw.startswith(CALL_OPEN) and _text_protocol(run, record.iteration):
            before = _reply_raw(run, record.iteration).split(raw)[0].rstrip()
            how = "a ```json fenced block" if before.endswith(("```json", "```")) else "bare JSON"
            message = f"{call.get('id')}: written as {how}, not in {CALL_OPEN} tags"
            yield Finding.at(record, "call_format", message, recovered=lenient, tool=name)
    yield from _talk_after_calls(run)


def _what_became(run: RunRecords, parsed: Record) -> str:
    """What became of a call once read: it ran, or it was read and then refused (an unknown
    tool, bad arguments: its own finding says so). "The call ran" was said of both."""
    call_id = call_of(parsed).get("id")
    for record in run.of("tool_finished"):
        if record.iteration == parsed.iteration and call_of(record).get("id") == call_id:
            result = record.data.get("result") or {}
            if result.get("cached"):
                return "answered with the earlier result of the same call"
            if result.get("ok"):
                return "the call ran"
            kind = str(result.get("error_kind") or "tool_error")
            if kind in _RAN_AND_FAILED or _RAN_AND_FAILED & {p.kind for p in problems_of(result)}:
                return f"the call ran and failed ({kind})"
            return f"the call did not run ({kind})"
    return "the call did not run"


_RAN_AND_FAILED = frozenset({"tool_error", "cancelled", "tool_timeout", "stopped_at_time_limit"})
"""Error kinds (and problems) of a call that ran and then failed: the tool raised, took too
long, or was stopped while it ran. A timeout may also be a check that never let it start."""


def _text_protocol(run: RunRecords, iteration: int | None) -> bool:
    """The request offered no native tools and no JSON schema: calls are tagged text."""
    for record in run.of("iteration_started"):
        if record.iteration == iteration:
            request = record.data.get("request") or {}
            return not request.get("tools") and not request.get("response_format")
    return False


def _reply_raw(run: RunRecords, iteration: int | None) -> str:
    reply = next((r for r in run.of("model_replied") if r.iteration == iteration), None)
    return str(reply.data.get("raw", "")) if reply else ""


def _talk_after_calls(run: RunRecords) -> Iterator[Finding]:
    """A reply that goes on talking after its last text-protocol call: the model should stop
    and wait for the result (what it says there is often a result it made up)."""
    for reply in run.of("model_replied"):
        if not _text_protocol(run, reply.iteration):
            continue
        raw = str(reply.data.get("raw", ""))
        end = -1
        for record in run.of("tool_call_parsed", "parse_error"):
            call_raw = str(call_of(record).get("raw") or record.data.get("raw") or "")
            found = raw.rfind(call_raw) if call_raw else -1
            if record.iteration == reply.iteration and found >= 0:
                end = max(end, found + len(call_raw))
        after = raw[end:].strip() if end >= 0 else ""
        after = after.removeprefix("```").strip()  # a fenced call's closing fence
        if after:
            excerpt = clipped(after, 60)
            message = f"text after the call ({excerpt!r}): the model talks on instead of waiting"
            yield Finding.at(
                reply,
                "call_format",
                message,
                recovered="the call ran; the text was not taken as an answer",
            )


def content_calls(run: RunRecords) -> Iterator[Finding]:
    """Native calling, but the call came as JSON text in the content."""
    for record in run.of("notice"):
        if str(record.data.get("message", "")).startswith(_CONTENT_CALLS):
            message = "the call was written as JSON text in the content, not as native tool_calls"
            yield Finding.at(record, "call_format", message, recovered="read from the content")


def split_tags(run: RunRecords) -> Iterator[Finding]:
    """Streamed chunks (v1 `model_chunk` records) that end inside a call tag: harmless when the
    stream parser joins them, as it did if the call ran."""
    by_iteration: dict[int, list[Record]] = {}
    for record in run.of("model_chunk"):
        if record.iteration is not None:
            by_iteration.setdefault(record.iteration, []).append(record)
    for iteration, chunks in by_iteration.items():
        pieces = [str((c.data.get("delta") or {}).get("content") or "") for c in chunks]
        splits = _tag_splits(pieces)
        if splits:
            message = (
                f"iteration {iteration}: streamed chunks split a {CALL_OPEN} or {CALL_CLOSE} tag "
                f"{plural(splits, 'time')}; the stream parser joined them"
            )
            yield Finding.at(chunks[0], "split_tags", message, note=True)


def _tag_splits(pieces: list[str]) -> int:
    text = "".join(pieces)
    bounds = set(itertools.accumulate(len(piece) for piece in pieces[:-1]))
    splits = 0
    for tag in (CALL_OPEN, CALL_CLOSE):
        for match in re.finditer(re.escape(tag), text):
            splits += sum(1 for b in bounds if match.start() < b < match.end())
    return splits
