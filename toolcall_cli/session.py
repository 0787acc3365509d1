"""A conversation: the model, strategy, tools and history that successive questions share."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from toolcall_cli.choosing import Retrieval
from toolcall_cli.events import Event, Notice, RunFinished, RunStarted
from toolcall_cli.loop import Approver, Limits, Stepper, ToolPolicy, deny_all, run
from toolcall_cli.messages import Message
from toolcall_cli.models.base import Model
from toolcall_cli.strategies import get_strategy
from toolcall_cli.strategies.base import Strategy
from toolcall_cli.tools.registry import ToolRegistry


@dataclass
class Session:
    model: Model
    strategy: Strategy
    registry: ToolRegistry
    limits: Limits = field(default_factory=Limits)
    approve: Approver = deny_all
    step: Stepper | None = None
    """--step: the pauses before each model request and tool execution."""
    policy: ToolPolicy = field(default_factory=ToolPolicy)
    """How tools run, and what the session remembers of approvals and rate limits."""
    history: list[Message] = field(default_factory=list)
    strategy_settings: dict[str, Any] = field(default_factory=dict)
    """What `get_strategy` was given besides the name (modes, dag): kept by /strategy."""
    notes: tuple[str, ...] = ()
    """What the user should hear once, in the first run's view: how a setting they left open
    was chosen (the measured strategy for their server, say)."""
    retrieval: Retrieval | None = None
    """--retrieve: how each request's tools are chosen when there are many (None: all sent)."""

    def ask(self, question: str) -> Iterator[Event]:
        """One turn. If it does not finish (Ctrl-C, a stop at a step, or the consumer stops
        early) or the model failed, the history is put back as it was before the turn, so a
        half-finished turn never confuses the next (the trace still holds all of it)."""
        mark = len(self.history)
        finished = False
        try:
            for event in run(
                question,
                model=self.model,
                strategy=self.strategy,
                registry=self.registry,
                history=self.history,
                limits=self.limits,
                approve=self.approve,
                policy=self.policy,
                step=self.step,
                retrieval=self.retrieval,
            ):
                finished = isinstance(event, RunFinished) and event.stop_reason not in (
                    "model_failed",
                    "interrupted",  # stopped at a step (--step): its calls have no results
                )
                yield event
                if isinstance(event, RunStarted) and self.notes:
                    yield from (Notice(message=note) for note in self.notes)
                    self.notes = ()
        finally:
            if not finished:
                del self.history[mark:]

    def reset(self) -> None:
        self.history.clear()

    def use_model(self, model: Model) -> None:
        """Switch models; the old one's connections (if it has any) are closed."""
        self.close()
        self.model = model

    def close(self) -> None:
        close = getattr(self.model, "close", None)
        if callable(close):
            close()

    def use_strategy(self, name: str) -> None:
        """Switch strategies, keeping the session's strategy settings (modes, --dag)."""
        self.strategy = get_strategy(name, **self.strategy_settings)
