"""Reading the errors fed back: correcting a failed call, or saying honestly what failed."""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

from toolcall_cli.messages import ToolSpec
from toolcall_cli.offline._planner import Attempts, enum_match, fill_tool, make_plan
from toolcall_cli.offline._question import Reading
from toolcall_cli.offline._request import Exchange, PlannedCall, call_key, same_call
from toolcall_cli.offline._words import canonical_unit, enum_values, properties, required, stated

# What is quoted holds no quote mark of either kind: an opening mark that is never closed then
# reads up to the next mark only, not to the end of the text once per mark.
_QUOTED = r"[`'\"“‘]([^`'\"“”‘’]+)[`'\"”’]"
_SUGGESTION_RE = re.compile(
    rf"(?:did you mean|你是不是想|是否是|您是否要找)[:：]?\s*{_QUOTED}", re.I
)
_UNKNOWN_TOOL_RE = re.compile(r"unknown tool|no tool named|not a known tool|未知工具", re.I)
_AVAILABLE_RE = re.compile(r"available tools?:\s*([^\n]+)", re.I)
_MISSING_RE = re.compile(
    rf"missing required argument\s*{_QUOTED}|{_QUOTED} is a required property", re.I
)
_UNEXPECTED_RE = re.compile(
    rf"unexpected argument\s*{_QUOTED}|{_QUOTED} was unexpected|unknown argument\s*{_QUOTED}", re.I
)
_ENUM_RE = re.compile(rf"{_QUOTED} must be one of ([^;\n]+)|is not one of \[([^\[\]]+)\]", re.I)

_TRANSIENT_RE = re.compile(r"timed out|timeout|temporar|try again|rate limit|unavailable", re.I)


def fix_call(exchange: Exchange, reading: Reading, tools: Sequence[ToolSpec]) -> PlannedCall | None:
    """A corrected call for a failed one, read from what the error says; None if none is known."""
    error = exchange.result or ""
    call = exchange.call
    by_name = {spec.name: spec for spec in tools}
    if call.name not in by_name:
        renamed = renamed_tool(call.name, error, list(by_name))
        return PlannedCall(renamed, call.arguments, call.key) if renamed else None
    spec = by_name[call.name]
    arguments = apply_suggestion(dict(call.arguments), error, spec)
    arguments = drop_unexpected(arguments, error, spec)
    arguments = fix_enums(arguments, error, spec, reading)
    arguments = add_missing(arguments, error, spec, reading, call.key)
    return PlannedCall(call.name, arguments, call.key)


def quoted_groups(match: re.Match[str]) -> str:
    return next(g for g in match.groups() if g)


def renamed_tool(name: str, error: str, known: list[str]) -> str | None:
    suggestion = _SUGGESTION_RE.search(error)
    if suggestion and suggestion.group(1) in known:
        return suggestion.group(1)
    listed = _AVAILABLE_RE.search(error)
    candidates = [t.strip(" .`'\"") for t in listed.group(1).split(",")] if listed else known
    close = close_matches(name, [c for c in candidates if c in known], n=1, cutoff=0.5)
    return close[0] if close else None


CLOSE_CHARS = 64
"""The characters of each name or value that are compared for closeness: difflib's time grows
with the product of two lengths, and a text longer than this is no misspelt name."""


def close_matches(word: str, candidates: Sequence[str], n: int, cutoff: float) -> list[str]:
    """difflib.get_close_matches on the first CLOSE_CHARS characters of each."""
    cut: dict[str, str] = {}
    for candidate in candidates:
        cut.setdefault(candidate[:CLOSE_CHARS], candidate)
    found = difflib.get_close_matches(word[:CLOSE_CHARS], list(cut), n=n, cutoff=cutoff)
    return [cut[match] for match in found]


def apply_suggestion(arguments: dict[str, Any], error: str, spec: ToolSpec) -> dict[str, Any]:
    """ "Did you mean 'Paris'?" replaces the value the error names (or the closest one)."""
    match = _SUGGESTION_RE.search(error)
    if not match or _UNEXPECTED_RE.search(error) or _UNKNOWN_TOOL_RE.search(error):
        return arguments
    suggestion = match.group(1)
    strings = {k: v for k, v in arguments.items() if isinstance(v, str)}
    before = error[: match.start()]
    named = [k for k, v in strings.items() if v and v in before]
    target = named[0] if named else closest_key(strings, suggestion)
    return {**arguments, target: suggestion} if target else arguments


def closest_key(strings: dict[str, str], suggestion: str) -> str | None:
    cut = suggestion[:CLOSE_CHARS]
    ratios = {
        k: difflib.SequenceMatcher(None, v[:CLOSE_CHARS], cut).ratio() for k, v in strings.items()
    }
    return max(ratios, key=ratios.__getitem__, default=None)


def drop_unexpected(arguments: dict[str, Any], error: str, spec: ToolSpec) -> dict[str, Any]:
    """Remove unexpected names, moving each value to the expected name it was probably meant as."""
    fixed = dict(arguments)
    expected = list(properties(spec))
    for match in _UNEXPECTED_RE.finditer(error):
        wrong = quoted_groups(match)
        if wrong not in fixed:
            continue
        value = fixed.pop(wrong)
        close = close_matches(wrong, [e for e in expected if e not in fixed], 1, 0.5)
        if close:
            fixed[close[0]] = value
    return fixed


def fix_enums(
    arguments: dict[str, Any], error: str, spec: ToolSpec, reading: Reading
) -> dict[str, Any]:
    """Swap a value outside its enum for an allowed one: the same unit, the one the question
    names, or the closest spelling."""
    fixed = dict(arguments)
    props = properties(spec)
    for match in _ENUM_RE.finditer(error):
        name = match.group(1)
        targets = [name] if name in fixed else [k for k in fixed if enum_values(props.get(k, {}))]
        for target in targets:
            options = enum_values(props.get(target, {}))
            if fixed[target] in options:
                continue
            chosen = (
                same_unit_option(fixed[target], options)
                or enum_match(options, reading)
                or closest_option(fixed[target], options)
            )
            if chosen:
                fixed[target] = chosen[0]
    return fixed


def same_unit_option(value: Any, options: list[Any]) -> list[Any]:
    unit = canonical_unit(str(value))
    return [o for o in options if unit and canonical_unit(str(o)) == unit][:1]


def closest_option(value: Any, options: list[Any]) -> list[Any]:
    texts = [str(o) for o in options]
    close = close_matches(str(value), texts, n=1, cutoff=0.0)
    return [options[texts.index(close[0])]] if close else []


def add_missing(
    arguments: dict[str, Any],
    error: str,
    spec: ToolSpec,
    reading: Reading,
    key: tuple[str, Any] | None,
) -> dict[str, Any]:
    """Fill the required names the call lacks, from the question (keeping this call's own key)."""
    absent = [n for n in required(spec) if n not in arguments]
    absent += [
        quoted_groups(m) for m in _MISSING_RE.finditer(error) if quoted_groups(m) not in arguments
    ]
    if not absent:
        return arguments
    fresh = fill_tool(spec, reading).calls
    source = next((c for c in fresh if key and c.arguments.get(key[0]) == key[1]), fresh[0])
    return {**arguments, **{n: source.arguments[n] for n in absent if n in source.arguments}}


def retry_allowed(fixed: PlannedCall, failed: Exchange, failures: Counter[Hashable]) -> bool:
    """Never send a call that already failed, except one identical retry of a transient error.
    `failures` counts the failed calls of the conversation by call_key."""
    same = failures[call_key(fixed)]
    if not same_call(fixed, failed.call):
        return not same
    return bool(_TRANSIENT_RE.search(failed.result or "")) and same < 2


def failed_calls(history: Iterable[Exchange]) -> Counter[Hashable]:
    """How often each call failed, by call_key, for retry_allowed."""
    return Counter(call_key(e.call) for e in history if e.failed)


def answerable(
    reading: Reading, turns: Sequence[Sequence[Exchange]], tools: Sequence[ToolSpec]
) -> list[Exchange]:
    """Successful results once each, plus the failures no later retry made good."""
    retried = retried_failures(reading, turns, tools)
    # The last turn in which any tool, and each tool, was called successfully: whether a later
    # turn made a call good is then a look-up, not a pass over the turns after it.
    last_ok, last_ok_of = -1, dict[str, int]()
    for t, turn in enumerate(turns):
        for exchange in turn:
            if not exchange.failed:
                last_ok = last_ok_of[exchange.call.name] = t
    keep: list[Exchange] = []
    kept: set[Hashable] = set()
    for t, turn in enumerate(turns):
        for i, exchange in enumerate(turn):
            if (t, i) in retried or (exchange.unparsed and last_ok > t):
                continue
            if exchange.call.skipped and last_ok_of.get(exchange.call.name, -1) > t:
                continue  # it waited for a call that failed, and was made once that one worked
            if not exchange.failed and call_key(exchange.call) in kept:
                continue
            keep.append(exchange)
            kept.add(call_key(exchange.call))
    return keep


def retried_failures(
    reading: Reading, turns: Sequence[Sequence[Exchange]], tools: Sequence[ToolSpec]
) -> set[tuple[int, int]]:
    """(turn, index) of failed calls that a later turn made good: a retry is the fix the model
    derives from the failure (so the lineage is recomputed, not remembered), made in the next
    turn or, when that retry failed too, succeeding later."""
    retried: set[tuple[int, int]] = set()
    siblings = Counter(call.name for call in make_plan(reading, tools).calls)
    later_ok = Attempts()  # the successful calls of turn t and after, going back from the last
    for t in range(len(turns) - 1, 0, -1):
        for exchange in turns[t]:
            if not exchange.failed:
                later_ok.add(exchange)
        next_turn = {call_key(e.call) for e in turns[t]}
        for i, failed in enumerate(turns[t - 1]):
            fixed = fix_call(failed, reading, tools) if failed.failed else None
            if fixed and (
                call_key(fixed) in next_turn or later_ok.stand_for(fixed, siblings[fixed.name])
            ):
                retried.add((t - 1, i))
    return retried


def retry_lead_in(turn: Sequence[Exchange], reading: Reading) -> str:
    failed = next(e for e in turn if e.failed)
    reason = short_error(failed.result or "")
    if reading.zh:
        return f"上一次调用 {failed.call.name} 出错了（{reason}），我修正后重试。"
    return f"The call to {failed.call.name} failed ({reason}); let me fix it and try again."


def short_error(error: str) -> str:
    """An error on one line, without the "Error:" prefix and the closing advice to the model."""
    head, *items = error_lines(error)
    text = f"{head} {'; '.join(item.strip().removeprefix('- ') for item in items)}"
    return shorten(text.strip())


def failure_lines(exchange: Exchange, reading: Reading) -> list[str]:
    """What failed, quoting the error line by line, and what to tell me to try again."""
    name = exchange.call.name or "?"
    if exchange.call.skipped:  # why the call it waited for failed is said on that call's line
        waited = "、".join(exchange.call.depends_on) or "?"
        if reading.zh:
            return [f"{name} 没有运行：它依赖的调用（{waited}）失败了。"]
        return [f"{name} did not run: the call it depends on ({waited}) failed."]
    head, *items = error_lines(exchange.result or "no result")
    missing = [stated(quoted_groups(m)) for m in _MISSING_RE.finditer(exchange.result or "")]
    if reading.zh:
        ask = f"请告诉我 {'、'.join(missing)}，我再试一次。" if missing else ""
        failed = f"抱歉，{name} 调用失败：{head.rstrip(':：' if items else '.。')}"
        lines = [f"{failed}：", *items] if items else [f"{failed}。{ask}"]
    else:
        ask = f"Tell me the {', '.join(missing)} and I'll try again." if missing else ""
        failed = f"Sorry, {name} failed: {head.rstrip(':' if items else '.')}"
        lines = [f"{failed}:", *items] if items else [f"{failed}. {ask}".rstrip()]
    return [*lines, ask] if items and ask else lines


def error_lines(error: str) -> list[str]:
    """An error's lines without the "Error:" prefix and the closing advice to the model; the
    details of a multi-line error as "- ..." items. Each is stated, not pasted (see `stated`):
    a tool's error is its text as much as its result is."""
    lines = [line.strip() for line in error.strip().splitlines()]
    lines = [line for line in lines if line and not line.lower().startswith("fix these")]
    if not lines:
        return ["unknown error"]
    head = re.sub(r"^error:?\s*", "", lines[0], flags=re.I) or "unknown error"
    items = [f"  - {shorten(line.lstrip('- '))}" for line in lines[1:]]
    return [shorten(head), *items]


def shorten(text: str) -> str:
    return stated(text, 160)
