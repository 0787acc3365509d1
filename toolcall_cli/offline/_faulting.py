"""When a fault fires: what it may look at, and the odds of making and repeating a mistake."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol

from toolcall_cli.messages import ToolSpec
from toolcall_cli.models.completions import AssistantOutput
from toolcall_cli.offline import _lexicon as lx
from toolcall_cli.offline._conversation import (
    CallFormat,
    Conversation,
    Decision,
    Exchange,
    PlannedCall,
    Shape,
)

CORRECTS_AFTER_ERROR = 0.8
"""The chance that the model fixes a mistake the engine reported; else it makes it once more."""

ALL_SHAPES: frozenset[Shape] = frozenset({"text", "native", "json"})
TEXT_ONLY: frozenset[Shape] = frozenset({"text"})


@dataclass(frozen=True)
class FaultContext:
    """What a fault may look at: what the model read from the request, how many turns came
    before, whether the reply is streamed."""

    conversation: Conversation
    turn: int
    """The model's replies since the question, readable or not (a cut-off call counts too)."""
    streaming: bool
    key: str
    """The request's digest (seed and body): faults derive their own RNGs from it."""

    @property
    def format(self) -> CallFormat:
        return self.conversation.format

    @property
    def shape(self) -> Shape:
        return self.conversation.format.shape


class Fault(Protocol):
    """A deliberate misbehaviour. It may change what the model decides (a wrong argument name, a
    missing argument) or how it writes it (single quotes, a missing closing tag)."""

    def alter_decision(self, decision: Decision, context: FaultContext) -> Decision: ...

    def alter_output(self, output: AssistantOutput, context: FaultContext) -> AssistantOutput: ...


class FaultBase:
    """Decides when a fault fires; subclasses say how it applies and what the engine says back."""

    kind: ClassVar[str]
    shapes: ClassVar[frozenset[Shape]] = ALL_SHAPES
    reported_as: ClassVar[re.Pattern[str] | None] = None
    """How the engine's error about this mistake reads; None when the engine fixes it silently."""

    def __init__(self, rate: float = 1.0) -> None:
        self.rate = rate

    def __repr__(self) -> str:
        return f"{type(self).__name__}(rate={self.rate:g})"

    def alter_decision(self, decision: Decision, context: FaultContext) -> Decision:
        return decision

    def alter_output(self, output: AssistantOutput, context: FaultContext) -> AssistantOutput:
        return output

    def rng(self, context: FaultContext) -> random.Random:
        """This fault's own draws for this request, independent of the other faults."""
        return random.Random(f"{context.key}:{self.kind}")

    def fires(self, context: FaultContext, applicable: bool) -> bool:
        if not applicable or self.rate <= 0 or context.shape not in self.shapes:
            return False
        chance = random.Random(f"{context.key}:{self.kind}:fires").random()
        if self.repeating(context):
            return chance >= CORRECTS_AFTER_ERROR
        return not self.had_opportunity(context) and chance < self.rate

    def had_opportunity(self, context: FaultContext) -> bool:
        """Whether an earlier reply could already have carried this fault: it fires fresh only
        on its first opportunity. Most faults apply to the first reply that makes calls."""
        return context.turn > 0

    def repeating(self, context: FaultContext) -> bool:
        """The engine reported this mistake on the last turn, and not on the turn before (so a
        mistake is made at most twice in a row)."""
        turns = context.conversation.turns
        return (
            bool(turns)
            and self.reported(turns[-1])
            and not (len(turns) > 1 and self.reported(turns[-2]))
        )

    def reported(self, turn: Sequence[Exchange]) -> bool:
        pattern = self.reported_as
        return pattern is not None and any(pattern.search(e.result or "") for e in turn)


def tool_spec(context: FaultContext, name: str) -> ToolSpec | None:
    return next((t for t in context.conversation.tools if t.name == name), None)


def asks_in_chinese(context: FaultContext) -> bool:
    return lx.has_cjk(context.conversation.question)


def with_call(decision: Decision, index: int, call: PlannedCall) -> Decision:
    calls = list(decision.calls)
    calls[index] = call
    return Decision(tuple(calls), decision.text)
