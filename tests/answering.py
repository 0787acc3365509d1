"""Answering what a run asks (ApprovalAsked, StepPaused) with plain functions, as a program that
uses toolcall as a library does: the loop asks, the consumer answers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from toolcall_cli.events import ApprovalAsked, Event, StepPaused
from toolcall_cli.session import answered

Approve = Callable[[ApprovalAsked], Any]
"""Answers an ApprovalAsked: "yes", "no", "always", True/False, or a Declined."""


class Answering:
    """Answers approvals with `approve` and --step's pauses with `stepper` (anything with an
    `answer(pause)`); what either leaves out goes unanswered, as where nobody can be asked."""

    def __init__(self, approve: Approve | None = None, stepper: Any = None) -> None:
        self.approve = approve
        self.stepper = stepper

    def answer(self, event: ApprovalAsked | StepPaused) -> None:
        if isinstance(event, ApprovalAsked):
            if self.approve is not None:
                event.answer(self.approve(event))
        elif self.stepper is not None:
            self.stepper.answer(event)


def answering(
    events: Iterator[Event], approve: Approve | None = None, stepper: Any = None
) -> Iterator[Event]:
    return answered(events, Answering(approve, stepper))
