"""What a kata is graded on: cases, each a category, a source and a check of the user's code,
and the verdict a check gives (expected against got). A check reaches the user's code only
through `Solution`: the code runs in a sandboxed process of its own, and what it returns comes
back as data, to be judged here."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NoReturn, Protocol

Source = Literal["built-in", "offline faults", "real outputs"]
SOURCES: tuple[Source, ...] = ("built-in", "offline faults", "real outputs")

SHOWN_CHARS = 400
"""How much of an expected or a got value a verdict keeps: enough to see the difference."""


@dataclass(frozen=True)
class Verdict:
    passed: bool
    expected: str = ""
    got: str = ""


Step = tuple[Any, ...]
"""One step on the user's StreamParser objects: ("new",), ("feed", n, chunk) or ("close", n)."""


class Chat(Protocol):
    """The model the loop kata gives the user's agent_loop: it keeps every request."""

    def __call__(self, messages: Any) -> dict[str, Any]: ...

    def refuse(self, problem: str) -> NoReturn: ...


class Solution(Protocol):
    """The user's code as a check reaches it. Each method returns what the user's code
    returned (as data: dicts, lists, tuples and scalars as they were, any other object as its
    repr) and raises when the code raised, ran past its time or out of memory."""

    def call(self, function: str, *arguments: Any) -> Any:
        """A function of the user's file, called with JSON values."""
        ...

    def call_on_samples(self, function: str, *arguments: Any) -> Any:
        """A function of the user's file, called with JSON values in which each
        `{"sample function": name}` is that Python function (see _samples)."""
        ...

    def parsers(self, steps: Sequence[Step]) -> list[Any]:
        """The steps run in order on new StreamParser objects; what each returned."""
        ...

    def agent_loop(
        self,
        chat: Chat,
        toolbox: Sequence[str],
        question: str,
        max_iterations: int,
        options: dict[str, Any],
    ) -> Any:
        """The user's agent_loop, its chat() served by `chat`, its tools built from the
        toolbox's description (see _toolbox.make_toolbox) where it runs."""
        ...


@dataclass(frozen=True)
class Case:
    category: str
    source: Source
    name: str
    check: Callable[[Solution], Verdict]
    """Runs the user's code and judges what it did."""
    time_limit: float | None = None
    """Seconds this case may take, when not the check's own --time-limit."""
    given: str = ""
    """What the case feeds the user's code, shown when it fails: without it, a failure says
    what was expected but not of which input. Empty when the name says it all."""


@dataclass(frozen=True)
class Battery:
    cases: tuple[Case, ...]
    conformance: str
    """One line: the real outputs the battery holds, or why it holds none."""
    coverage: str
    """One line: the offline model's fault kinds this kata meets, and where the others are."""


def shown(value: Any) -> str:
    """A value as one line of JSON (repr for what JSON cannot say), cut to SHOWN_CHARS."""
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    return clipped(text)


def clipped(text: str) -> str:
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def canonical(value: Any) -> str:
    """A value as JSON with sorted keys: equal only when the JSON is, so 5 is not 5.0 and
    true is not 1 (Python's == says they are)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr)


def agree(expected: Any, got: Any) -> Verdict:
    return Verdict(canonical(expected) == canonical(got), shown(expected), shown(got))


def normal_space(text: str) -> str:
    """Whitespace runs as one space, none at the ends: where a parser keeps a newline around
    a call is not graded."""
    return " ".join(text.split())
