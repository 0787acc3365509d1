"""A conversation: the model, strategy, tools and history that successive questions share."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from toolcall_cli.events import ApprovalAsked, Event, Notice, RunFinished, RunStarted, StepPaused
from toolcall_cli.loop import Limits, ToolPolicy, run
from toolcall_cli.messages import Message
from toolcall_cli.models.base import Model
from toolcall_cli.request_tools import Retrieval
from toolcall_cli.strategies import get_strategy
from toolcall_cli.strategies.base import Strategy
from toolcall_cli.tools.registry import ToolRegistry

if TYPE_CHECKING:
    # asyncio and the rest: imported only when a server is configured.
    from toolcall_cli.tools.mcp_servers import McpServers


class Answers(Protocol):
    """Who answers what a run asks (approval, --step): the terminal in `run` and `chat`; nobody
    in `compare`, `replay` and `serve`, where what is asked goes unanswered (declined)."""

    def answer(self, event: ApprovalAsked | StepPaused) -> None: ...


def answered(
    events: Iterator[Event],
    answers: Answers | None,
    suspended: Callable[[], AbstractContextManager[None]] = nullcontext,
) -> Iterator[Event]:
    """`events`, with each question of the run answered by `answers` once the consumer has
    taken (and shown) it, inside `suspended()` (a live view must not draw over the prompt)."""
    for event in events:
        yield event
        if answers is not None and isinstance(event, (ApprovalAsked, StepPaused)):
            with suspended():
                answers.answer(event)


@dataclass(frozen=True)
class ModelSetup:
    """What a model runs with that depends on the model (the defaults for a small model, where
    nothing chose them): the strategy and what it was made with, its sampling among them; how
    each request's tools are chosen; and the lines that say which defaults were taken."""

    strategy: Strategy
    strategy_settings: dict[str, Any]
    retrieval: Retrieval | None
    notes: tuple[str, ...] = ()


@dataclass
class Session:
    model: Model
    strategy: Strategy
    registry: ToolRegistry
    limits: Limits = field(default_factory=Limits)
    answers: Answers | None = None
    """Who answers what a run asks (approval, --step); None: nobody can be asked."""
    stepping: bool = False
    """--step: the run pauses before each model request and tool execution."""
    policy: ToolPolicy = field(default_factory=ToolPolicy)
    """How tools run, and what the session remembers of approvals and rate limits."""
    history: list[Message] = field(default_factory=list)
    strategy_settings: dict[str, Any] = field(default_factory=dict)
    """What `get_strategy` was given besides the name (modes, dag): kept by /strategy."""
    strategy_given: bool = False
    """The user chose the strategy (a flag, the environment, the config, /strategy): a model
    switched to keeps it rather than taking its own default."""
    notes: tuple[str, ...] = ()
    """What the user should hear once, in the first run's view: how a setting they left open
    was chosen (the measured strategy for their server, say)."""
    retrieval: Retrieval | None = None
    """--retrieve: how each request's tools are chosen when there are many (None: all sent)."""
    mcp: McpServers | None = None
    """The MCP servers whose tools are in the registry; stopped by close()."""

    def ask(self, question: str) -> Iterator[Event]:
        """One turn. If it does not finish (Ctrl-C, a stop at a step, or the consumer stops
        early) or the model failed, the history is put back as it was before the turn, so a
        half-finished turn never confuses the next (the trace still holds all of it)."""
        mark = len(self.history)
        finished = False
        # A server that went down between turns: its tools are out before the run lists them,
        # and the line is shown once the run has started.
        held = self._withdraw()
        try:
            for event in run(
                question,
                model=self.model,
                strategy=self.strategy,
                registry=self.registry,
                history=self.history,
                limits=self.limits,
                policy=self.policy,
                stepping=self.stepping,
                retrieval=self.retrieval,
            ):
                finished = isinstance(event, RunFinished) and event.stop_reason not in (
                    "model_failed",
                    "interrupted",  # stopped at a step (--step): its calls have no results
                )
                yield event
                if isinstance(event, RunStarted):
                    yield from (Notice(message=note) for note in self.notes)
                    self.notes = ()
                    yield from held
                    held = []
                # On the loop's thread, between its steps: the registry is never changed while
                # the loop reads it.
                yield from self._withdraw()
        finally:
            if not finished:
                del self.history[mark:]

    def reset(self) -> None:
        self.history.clear()

    def use_model(self, model: Model, setup: ModelSetup | None = None) -> None:
        """Switch models; the old one's connections (if it has any) are closed. `setup`: what
        the new model runs with, its notes told at the next run's start; None keeps the old
        model's."""
        self._close_model()
        self.model = model
        if setup is not None:
            self.strategy, self.strategy_settings = setup.strategy, setup.strategy_settings
            self.retrieval, self.notes = setup.retrieval, setup.notes

    def close(self) -> None:
        """The model's connections and the MCP servers are closed (the servers stopped)."""
        self._close_model()
        if self.mcp is not None:
            self.mcp.close()

    def _close_model(self) -> None:
        close = getattr(self.model, "close", None)
        if callable(close):
            close()

    def _withdraw(self) -> list[Notice]:
        """Take the tools of MCP servers given up on out of the registry; one line each."""
        if self.mcp is None:
            return []
        notices: list[Notice] = []
        for withdrawal in self.mcp.withdrawn():
            for name in withdrawal.tools:
                self.registry.remove(name)
            notices.append(Notice(level="warning", message=withdrawal.message))
        return notices

    def use_strategy(self, name: str) -> None:
        """Switch strategies, keeping the session's strategy settings (modes, --dag)."""
        self.strategy = get_strategy(name, **self.strategy_settings)
        self.strategy_given = True
