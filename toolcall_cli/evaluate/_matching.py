"""A model's calls against the calls a case expects, by the rules of BFCL's AST checker: the
function's name, no argument it does not take, every required one, each value one of the
acceptable ones (strings normalised, numbers within a tolerance, lists in order, objects key by
key), an argument whose acceptable values include "" (or null) may be left out, and parallel
calls match in any order."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

CallProblemKind = Literal["no tool", "wrong tool", "wrong argument", "extra call"]
"""Why a reply's calls are not the expected ones: no call at all; a call to a tool no expected
call names (or an expected tool never called); the right tool with an argument that is not
acceptable (missing, unknown, or a wrong value); more calls than expected."""


def optional(value: Any) -> bool:
    """Whether an acceptable value says the argument may be left out (BFCL writes "")."""
    return value is None or (isinstance(value, str) and value == "")


@dataclass(frozen=True)
class Tolerance:
    """How far a number may be from an acceptable one."""

    abs: float = 1e-9
    rel: float = 1e-9

    def close(self, value: float, want: float) -> bool:
        return math.isclose(value, want, rel_tol=self.rel, abs_tol=self.abs)


EXACT = Tolerance()


@dataclass(frozen=True)
class ExpectedCall:
    """One call a case expects: the tool, and for each argument the values that are right."""

    name: str
    args: Mapping[str, tuple[Any, ...]] | None = field(default_factory=dict)
    """Each argument's acceptable values (any one of them will do). "" or None among them: the
    argument may be left out. None: the case gave no `args`, and any arguments will do."""

    def describe(self) -> str:
        if self.args is None:
            return f"{self.name}(...)"
        shown = ", ".join(f"{k}={_shown(v)}" for k, v in self.args.items())
        return f"{self.name}({shown})"


def _shown(values: tuple[Any, ...]) -> str:
    given = [v for v in values if not optional(v)]
    text = "|".join(repr(v) for v in given) or "…"
    return text + ("?" if len(given) < len(values) else "")


def acceptable(value: Any) -> tuple[Any, ...]:
    """An argument's acceptable values as a case writes them: a list is the choices (BFCL's
    form; an array value is written inside another list), anything else the one value."""
    return tuple(value) if isinstance(value, list) else (value,)


@dataclass(frozen=True)
class CallProblem:
    kind: CallProblemKind
    detail: str


@dataclass(frozen=True)
class MadeCall:
    """A call as the model wrote it: a name and its decoded arguments (whatever they are)."""

    name: str
    arguments: Any

    def describe(self) -> str:
        if isinstance(self.arguments, dict):
            shown = ", ".join(f"{k}={v!r}" for k, v in self.arguments.items())
            return f"{self.name}({shown})"
        return f"{self.name}({self.arguments!r})"


# --- one value --------------------------------------------------------------------------------

_NOISE = re.compile(r"[ ,./\-_*^]")


def normalised(text: str) -> str:
    """A string as BFCL compares it: no spaces or `,./-_*^`, lower case, `'` read as `"` (so
    "April 1, 2024" and "april 1 2024" are the same answer)."""
    return _NOISE.sub("", text).lower().replace("'", '"')


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def value_matches(value: Any, want: Any, tolerance: Tolerance = EXACT) -> bool:
    """Whether a value the model gave is the acceptable value `want`."""
    if isinstance(want, bool) or isinstance(value, bool):
        return value is want
    if _number(want):
        return _number(value) and tolerance.close(float(value), float(want))
    if isinstance(want, str):
        return isinstance(value, str) and normalised(value) == normalised(want)
    if isinstance(want, list):
        return (
            isinstance(value, list)
            and len(value) == len(want)
            and all(value_matches(v, w, tolerance) for v, w in zip(value, want, strict=True))
        )
    if isinstance(want, dict):
        # Checked as a call's arguments are: a nested list in `want` is that key's choices.
        expected = {key: acceptable(choices) for key, choices in want.items()}
        return isinstance(value, dict) and arguments_problem(value, expected, tolerance) is None
    return bool(value == want)


def arguments_problem(
    arguments: Mapping[str, Any],
    expected: Mapping[str, tuple[Any, ...]],
    tolerance: Tolerance = EXACT,
) -> str | None:
    """What is wrong with a call's arguments, or None: an argument not expected, one missing,
    or one whose value is none of the acceptable ones."""
    unknown = [name for name in arguments if name not in expected]
    if unknown:
        return f"unexpected argument `{unknown[0]}`"
    for name, values in expected.items():
        if name not in arguments:
            if any(optional(v) for v in values):
                continue
            return f"missing argument `{name}`"
        given = arguments[name]
        if not any(value_matches(given, want, tolerance) for want in values if want is not None):
            return f"`{name}` = {given!r}, expected {_shown(values)}"
    return None


# --- one call, then a reply's calls -------------------------------------------------------------


def call_problem(
    call: MadeCall, expected: ExpectedCall, tolerance: Tolerance = EXACT
) -> CallProblem | None:
    """Why `call` is not `expected`, or None when it is."""
    if call.name != expected.name:
        return CallProblem("wrong tool", f"called {call.name}, expected {expected.name}")
    if not isinstance(call.arguments, dict):
        return CallProblem("wrong argument", f"{call.name}: the arguments are not an object")
    if expected.args is None:
        return None
    problem = arguments_problem(call.arguments, expected.args, tolerance)
    return None if problem is None else CallProblem("wrong argument", f"{call.name}: {problem}")


def pairing(
    made: Sequence[MadeCall], expected: Sequence[ExpectedCall], tolerance: Tolerance = EXACT
) -> dict[int, int]:
    """The most expected calls that can each be matched by a call of their own, in any order:
    expected index -> made index (a bipartite matching, so a greedy first pick never hides a
    pairing that works)."""
    fits = [
        [j for j, call in enumerate(made) if call_problem(call, want, tolerance) is None]
        for want in expected
    ]
    owner: dict[int, int] = {}  # made index -> expected index

    def place(i: int, seen: set[int]) -> bool:
        for j in fits[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or place(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(len(expected)):
        place(i, set())
    return {i: j for j, i in owner.items()}


def calls_problem(
    made: Sequence[MadeCall],
    expected: Sequence[ExpectedCall],
    tolerance: Tolerance = EXACT,
    *,
    exact: bool = True,
) -> CallProblem | None:
    """Why the calls `made` are not those `expected`, or None when they are. `exact`: the calls
    of one reply, which must be exactly the expected ones in any order (BFCL's AST categories);
    otherwise the calls of a whole run, where each expected call must be among them and others
    (a look-up, a retry after an error) may be too."""
    if not expected:
        if made:
            return CallProblem("extra call", f"expected no call, got {made[0].describe()}")
        return None
    if not made:
        return CallProblem("no tool", "no tool was called")
    matched = pairing(made, expected, tolerance)
    missing = [want for i, want in enumerate(expected) if i not in matched]
    if missing:
        return _missing_problem(made, missing[0], tolerance)
    if exact and len(made) > len(expected):
        spare = next(call for j, call in enumerate(made) if j not in matched.values())
        return CallProblem(
            "extra call", f"{len(made)} calls, expected {len(expected)}: {spare.describe()}"
        )
    return None


def _missing_problem(
    made: Sequence[MadeCall], want: ExpectedCall, tolerance: Tolerance
) -> CallProblem:
    """Why an expected call found no call: the nearest one of its name says which argument."""
    same = [call for call in made if call.name == want.name]
    if not same:
        names = ", ".join(dict.fromkeys(call.name for call in made))
        return CallProblem("wrong tool", f"{want.name} was not called (called: {names})")
    problem = call_problem(same[0], want, tolerance)
    if problem is None:  # every call of the name went to another expected call
        return CallProblem("wrong argument", f"no call matches {want.describe()}")
    return problem
