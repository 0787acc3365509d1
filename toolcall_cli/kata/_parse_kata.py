"""The battery of kata parse: `parse_tool_calls(text)` on every reply of the text cases."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolcall_cli.kata._battery import Battery, Case, Solution, Verdict, agree, shown
from toolcall_cli.kata._text_cases import BUILT_IN, Reply, fault_replies, real_replies


def battery(conformance: Path | None) -> Battery:
    faults, coverage = fault_replies()
    real, note = real_replies(conformance)
    cases = [case(reply) for reply in (*BUILT_IN, *faults, *real)]
    return Battery(tuple(cases), note, coverage)


def case(reply: Reply) -> Case:
    def check(solution: Solution) -> Verdict:
        return judge(reply, solution.call("parse_tool_calls", reply.whole))

    return Case(reply.category, reply.source, reply.name, check, given=shown(reply.whole))


def judge(reply: Reply, got: Any) -> Verdict:
    """The calls must be the reply's, in order, and (where the source says) so must the
    number of errors."""
    expected: dict[str, Any] = {"calls": list(reply.calls)}
    if reply.errors is not None:
        expected["errors"] = reply.errors
    if not isinstance(got, list) or not all(isinstance(item, dict) for item in got):
        return Verdict(False, shown(expected), f"not a list of dicts: {shown(got)}")
    found: dict[str, Any] = {
        "calls": [
            {"name": i.get("name"), "arguments": i.get("arguments")} for i in got if "name" in i
        ]
    }
    if reply.errors is not None:
        found["errors"] = sum(1 for item in got if "error" in item and "name" not in item)
    odd = [item for item in got if "name" not in item and not said(item.get("error"))]
    if odd:
        return Verdict(
            False, shown(expected), f"entries with neither a name nor an error: {shown(odd)}"
        )
    return agree(expected, found)


def said(message: Any) -> bool:
    """An error message the model can read: a string with something in it."""
    return isinstance(message, str) and bool(message.strip())
