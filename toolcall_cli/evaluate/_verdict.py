"""One run against its case: right, wrong (and which way), or no answer (and why)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, get_args

from toolcall_cli.evaluate._grading import ExpectedAnswer, invented, non_answer_kind
from toolcall_cli.evaluate._matching import MadeCall, Tolerance, calls_problem
from toolcall_cli.evaluate.cases import Case, needed_tools

Outcome = Literal["right", "wrong", "no answer", "not graded"]
WrongKind = Literal[
    "no tool", "wrong tool", "wrong argument", "extra call", "invented answer", "wrong answer"
]
WRONG_KINDS: tuple[WrongKind, ...] = get_args(WrongKind)
"""Why a wrong run was wrong, the first that applies:
- no tool: no tool was called, where the case needs one;
- wrong tool: a tool the case needs was never called (or a call named another);
- wrong argument: the right tool, with an argument that is not acceptable;
- extra call: a call where none (or fewer) were expected;
- invented answer: the answer states a figure found neither in the question nor in any result;
- wrong answer: the figures come from the question or the results, but are not the right ones.
"""

CALL_TOLERANCE = Tolerance(abs=1e-6, rel=1e-6)
"""Numbers in a call's arguments: 2 and 2.0 are one value, as in BFCL's checker."""


@dataclass(frozen=True)
class RunOutput:
    """What a run did, as far as grading needs: read from its events."""

    stop_reason: str
    answer: str | None
    calls: tuple[MadeCall, ...] = ()
    """Every call the model wrote in the run, in order."""
    first_calls: tuple[MadeCall, ...] = ()
    """The calls of the model's first reply (what --calls-only grades)."""
    results: tuple[str, ...] = ()
    """The text of each tool result fed back."""
    best_effort: bool = False
    failure: str | None = None


@dataclass(frozen=True)
class Verdict:
    outcome: Outcome
    kind: str | None = None
    """Wrong: one of WRONG_KINDS. No answer: how the run ended, or the kind of non-answer."""
    detail: str = ""
    ended_0_non_answer: bool = False
    """The run ended as answered (exit 0), with something that is no answer."""

    def record(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def grade(
    case: Case,
    run: RunOutput,
    expected: ExpectedAnswer | None,
    tool_names: Iterable[str],
    *,
    calls_only: bool = False,
) -> Verdict:
    """The run's verdict. `calls_only`: only the first reply's calls are graded, and they must
    be exactly the expected ones (BFCL's AST categories)."""
    if calls_only:
        return grade_first_calls(case, run)
    if run.stop_reason != "answered" or run.answer is None:
        return Verdict("no answer", run.stop_reason, run.failure or "")
    kind = non_answer_kind(run.answer, tool_names, run.results)
    if kind is not None:
        return Verdict("no answer", kind, "", ended_0_non_answer=True)
    if case.calls is not None:
        problem = calls_problem(run.calls, case.calls, CALL_TOLERANCE, exact=not case.calls)
        if problem is not None:
            return Verdict("wrong", problem.kind, problem.detail)
    if expected is not None and not expected.holds(run.answer):
        return Verdict("wrong", wrong_answer_kind(case, run), f"expected {expected.describe()}")
    return Verdict("right")


def grade_first_calls(case: Case, run: RunOutput) -> Verdict:
    if case.calls is None:
        return Verdict(
            "not graded", None, "the case expects an answer, and --calls-only grades calls"
        )
    if run.stop_reason == "model_failed":
        return Verdict("no answer", run.stop_reason, run.failure or "")
    problem = calls_problem(run.first_calls, case.calls, CALL_TOLERANCE, exact=True)
    return Verdict("right") if problem is None else Verdict("wrong", problem.kind, problem.detail)


def wrong_answer_kind(case: Case, run: RunOutput) -> WrongKind:
    """Why a wrong answer is wrong (see WRONG_KINDS)."""
    called = {call.name for call in run.calls}
    if not called and needed_tools(case):
        return "no tool"
    if not needed_tools(case) <= called:
        return "wrong tool"
    if invented(run.answer or "", case.question, run.results):
        return "invented answer"
    return "wrong answer"
