"""Calls of one reply that depend on each other (`--dag`): the graph, its checks, and putting an
earlier call's result into a later call's arguments.

A call names itself with an id and waits for the ids in its `depends_on`. A string argument may
hold `{{ID}}` (the whole result of call ID) or `{{ID.path}}` (`.field` and `[index]` steps into
its JSON result); a placeholder implies the dependency. A graph with an unknown id, a call
waiting for itself, a cycle, a repeated id or a malformed placeholder runs none of its calls.
"""

from __future__ import annotations

import graphlib
import json
import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolcall_cli.messages import ToolCall

_PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}", re.S)
_REF = r"[A-Za-z0-9_\-]{1,64}"
_PATH_STEP = re.compile(r"\.([A-Za-z_][\w\-]*)|\[(\d{1,9})\]|\[\"([^\"\]]*)\"\]")
_WHOLE_REF = re.compile(rf"\s*({_REF})(.*?)\s*", re.S)
MAX_STEPS = 32

Step = str | int


@dataclass(frozen=True)
class Reference:
    """One `{{ID.path}}` in an argument."""

    ref: str
    path: tuple[Step, ...]
    text: str
    """The placeholder as written, braces included."""


class GraphProblem(ValueError):
    """Why the calls of a reply cannot run as a graph; the message names the calls and ids."""


@dataclass(frozen=True)
class Graph:
    """The calls of one reply with what each waits for, by call id (the parser's ids)."""

    waits_for: Mapping[str, tuple[str, ...]]
    """Call id → the call ids it waits for, in the order the model wrote them."""
    by_ref: Mapping[str, str]
    """The model's id of a call → the call id."""


def placeholders(value: Any) -> Iterator[tuple[str, str]]:
    """(placeholder text, inside) for each `{{...}}` in the strings of a JSON value."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            for m in _PLACEHOLDER.finditer(item):
                yield m.group(0), m.group(1)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def read_reference(text: str, inside: str) -> Reference:
    """`{{w.forecast[0].high}}` → Reference("w", ("forecast", 0, "high")); GraphProblem if it
    is not one."""
    m = _WHOLE_REF.fullmatch(inside)
    if m is None:
        raise GraphProblem(f"`{text}` is not a placeholder: write {{{{id}}}} or {{{{id.field}}}}")
    ref, rest = m.group(1), m.group(2)
    path: list[Step] = []
    position = 0
    while position < len(rest):
        step = _PATH_STEP.match(rest, position)
        if step is None or len(path) >= MAX_STEPS:
            raise GraphProblem(
                f"`{text}`: `{rest[position:][:40]}` is not a path step; use .field or [0]"
            )
        field, index, quoted = step.groups()
        path.append(int(index) if index is not None else (field or quoted or ""))
        position = step.end()
    return Reference(ref, tuple(path), text)


def build_graph(calls: Sequence[ToolCall], past_cap: Collection[str] = ()) -> Graph:
    """The graph of a reply's calls; raises GraphProblem naming everything that is wrong.
    `past_cap`: the ids of the reply's calls past --max-calls-per-reply, which never run."""
    problems: list[str] = []
    by_ref = _by_ref(calls, problems)
    waits_for: dict[str, tuple[str, ...]] = {}
    for call in calls:
        wanted = [*call.depends_on, *(r.ref for r in _references(call, problems))]
        waits_for[call.id] = _waits_for(call, wanted, by_ref, problems, past_cap)
    cycle = _cycle(waits_for)
    if cycle:
        names = {call.id: call.name for call in calls}
        shown = " → ".join(_ref_or_name(calls, c, names) for c in [*cycle, cycle[0]])
        problems.append(f"the calls wait for each other in a circle: {shown}")
    if problems:
        raise GraphProblem("; ".join(dict.fromkeys(problems)))
    return Graph(waits_for=waits_for, by_ref=by_ref)


def _by_ref(calls: Sequence[ToolCall], problems: list[str]) -> dict[str, str]:
    """The model's ids for its calls, each to the call it names (the first, if repeated)."""
    by_ref: dict[str, str] = {}
    for call in calls:
        if call.ref is None:
            continue
        if call.ref in by_ref:
            problems.append(f"two calls have the id `{call.ref}`; each id must be unique")
        by_ref.setdefault(call.ref, call.id)
    return by_ref


def _references(call: ToolCall, problems: list[str]) -> tuple[Reference, ...]:
    """The placeholders in the call's arguments that read as references."""
    found: list[Reference] = []
    for text, inside in placeholders(call.arguments):
        try:
            found.append(read_reference(text, inside))
        except GraphProblem as problem:
            problems.append(f"`{call.name}` ({_who(call)}): {problem}")
    return tuple(found)


def _waits_for(
    call: ToolCall,
    wanted: list[str],
    by_ref: Mapping[str, str],
    problems: list[str],
    past_cap: Collection[str],
) -> tuple[str, ...]:
    """The calls (by call id) that `call` waits for, from the model's ids it names."""
    deps: list[str] = []
    for ref in wanted:
        target = by_ref.get(ref)
        if target is None and ref in past_cap:
            # "No call has that id" would be untrue: the model wrote it, too late in the reply.
            problems.append(
                f"`{call.name}` ({_who(call)}) waits for `{ref}`, which came after the most calls "
                "one reply may run and was not run: write the calls it waits for before it"
            )
        elif target is None:
            known = ", ".join(f"`{r}`" for r in by_ref) or "none"
            problems.append(
                f"`{call.name}` ({_who(call)}) waits for `{ref}`, but no call of this reply "
                f"has that id (ids: {known})"
            )
        elif target == call.id:
            problems.append(f"`{call.name}` ({_who(call)}) waits for itself")
        elif target not in deps:
            deps.append(target)
    return tuple(deps)


def _who(call: ToolCall) -> str:
    return f"id `{call.ref}`" if call.ref else f"call {call.id}"


def _ref_or_name(calls: Sequence[ToolCall], call_id: str, names: Mapping[str, str]) -> str:
    ref = next((c.ref for c in calls if c.id == call_id), None)
    return f"`{ref}`" if ref else f"`{names.get(call_id, call_id)}`"


def _cycle(waits_for: Mapping[str, tuple[str, ...]]) -> list[str]:
    """One cycle of the graph (its call ids, each waiting for the next), or [] when it has none."""
    try:
        graphlib.TopologicalSorter(waits_for).prepare()
    except graphlib.CycleError as error:
        # graphlib lists each node before the one that waits for it, the first node again last.
        return list(reversed(error.args[1]))[:-1]
    return []


# --- putting results in -------------------------------------------------------------------------


class Unresolved(ValueError):
    """A placeholder whose path is not in the result it names."""


def substitute(arguments: Any, results: Mapping[str, str]) -> Any:
    """`arguments` with every placeholder replaced from `results` (a call's id → its result
    text). A string that is exactly one placeholder takes the value found there (a number stays a
    number); one inside longer text takes it as text. Raises Unresolved."""
    if isinstance(arguments, dict):
        return {k: substitute(v, results) for k, v in arguments.items()}
    if isinstance(arguments, list):
        return [substitute(v, results) for v in arguments]
    if not isinstance(arguments, str) or "{{" not in arguments:
        return arguments
    whole = _PLACEHOLDER.fullmatch(arguments.strip())
    if whole is not None:
        return resolve(read_reference(whole.group(0), whole.group(1)), results)
    return _PLACEHOLDER.sub(
        lambda m: as_text(resolve(read_reference(m.group(0), m.group(1)), results)), arguments
    )


def resolve(reference: Reference, results: Mapping[str, str]) -> Any:
    """The value a reference points at in its call's result."""
    value: Any = _json_or_text(results[reference.ref])
    walked: list[str] = []
    for step in reference.path:
        value = _step(value, step, reference, walked)
        walked.append(f"[{step}]" if isinstance(step, int) else f".{step}")
    return value


def _step(value: Any, step: Step, reference: Reference, walked: list[str]) -> Any:
    where = f"the result of `{reference.ref}`" + "".join(walked)
    if isinstance(step, int):
        if isinstance(value, list) and step < len(value):
            return value[step]
        size = f"a list of {len(value)}" if isinstance(value, list) else _kind(value)
        raise Unresolved(f"`{reference.text}`: {where} has no item [{step}] (it is {size})")
    if isinstance(value, dict) and step in value:
        return value[step]
    if isinstance(value, dict):
        fields = ", ".join(f"`{k}`" for k in list(value)[:20]) or "none"
        raise Unresolved(f"`{reference.text}`: {where} has no field `{step}`; it has: {fields}")
    raise Unresolved(f"`{reference.text}`: {where} is {_kind(value)}, not an object with fields")


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


def as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _kind(value: Any) -> str:
    if isinstance(value, str):
        return "text"
    if value is None:
        return "null"
    return type(value).__name__ if not isinstance(value, (int, float)) else "a number"
