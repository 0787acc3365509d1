"""Each request fitted to the model: the history windowed (older tool rounds as a summary), and,
when the model's context window is known, compacted until the request fits it, with room left
for the reply. What the server says about its window (its usage, its "too long" errors) corrects
the estimate for the rest of the run."""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any

from toolcall_cli.events import Event, Notice
from toolcall_cli.history import ANSWER_RESULT_CHARS, PREVIEW_CHARS, fitted, windowed
from toolcall_cli.limits import Limits
from toolcall_cli.messages import Message, ToolSpec
from toolcall_cli.models.base import Model, context_window_of
from toolcall_cli.strategies.base import Strategy
from toolcall_cli.wire import ContextWindow, ModelError, ModelRequest
from toolcall_cli.wire.tokens import request_tokens
from toolcall_cli.wording import plural

REPLY_ROOM = 512
"""Tokens kept free for the reply when the request sets no max_tokens (or a quarter of the
window, if that is less)."""
RETRY_SQUEEZE = 0.75
"""After the server said a request was too long, requests are fitted into this share of the
budget for the rest of the run: the estimate was evidently short."""
MAX_SCALE = 8.0
"""The most one estimated token is taken to be worth in the server's tokens."""


def reply_room(window: int, body: dict[str, Any]) -> int:
    """Tokens kept for the reply: the request's own max_tokens, else a quarter of the window or
    REPLY_ROOM, whichever is less."""
    for key in ("max_tokens", "max_completion_tokens"):
        value = body.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return min(value, window)
    return min(window // 4, REPLY_ROOM)


class RequestFitter:
    """Builds a run's requests through its strategy, each fitted into the context window."""

    def __init__(self, limits: Limits, model: Model, strategy: Strategy) -> None:
        self.limits, self.model, self.strategy = limits, model, strategy
        self.window: ContextWindow | None = None
        self.window_known = False
        """Whether the window was looked for yet (it is looked for once, at the first request)."""
        self.token_scale = 1.0
        """How many of the server's tokens one estimated token proved to be (from its usage and
        its errors); never below 1."""
        self.squeeze = 1.0
        self.last_estimate = 0
        self.compacted = 0
        """Older rounds sent as a summary so far (a notice says when more are)."""

    def learn_window(self) -> Iterator[Event]:
        """The window, once per run: the user's, else the model's (an HTTP model asks its server
        once per session); shown when known."""
        if self.window_known:
            return
        self.window_known = True
        self.window = self.limits.context_window or context_window_of(self.model)
        if self.window is not None:
            yield Notice(
                message=f"context window {self.window.tokens:,} tokens (from {self.window.source})"
            )

    def request(
        self, history: list[Message], specs: list[ToolSpec], tools_withdrawn: bool
    ) -> Generator[Event, None, ModelRequest]:
        """The request for `history` and `specs`, windowed and, when the window is known,
        fitted into it; with notices for what was done to fit it.

        Once tools are withdrawn every round goes as the summary, with as much of each result
        as it can hold: the model then reads its results as data, and sees no call of its own
        to continue (a small model shown its calls kept writing calls, even with no tools)."""
        in_full = 0 if tools_withdrawn else self.limits.history_rounds
        result_chars = ANSWER_RESULT_CHARS if tools_withdrawn else PREVIEW_CHARS
        sent, compacted = windowed(history, in_full, result_chars)
        if compacted > self.compacted:
            yield Notice(message=summary_notice(compacted, tools_withdrawn))
        self.compacted = compacted
        request = self.strategy.build_request(sent, specs, self.model.name)
        self.last_estimate = request_tokens(request.body)
        window = self.window
        if window is None:
            return request
        budget = int((window.tokens - reply_room(window.tokens, request.body)) * self.squeeze)
        if self.last_estimate * self.token_scale <= budget:
            return request

        def measure(messages: list[Message]) -> int:
            body = self.strategy.build_request(messages, specs, self.model.name).body
            return int(request_tokens(body) * self.token_scale)

        fit = fitted(history, in_full, budget, measure, result_chars)
        request = self.strategy.build_request(fit.messages, specs, self.model.name)
        self.last_estimate = request_tokens(request.body)
        yield fit_notice(window, fit.compacted - self.compacted, fit.cut, fit.fits, fit.tokens)
        return request

    def shrink_after(self, error: ModelError) -> Notice:
        """Learn from the server's "too long" what the next try must fit into, and say so."""
        estimate = max(self.last_estimate, 1)
        if error.prompt_tokens:
            self.token_scale = max(self.token_scale, min(error.prompt_tokens / estimate, MAX_SCALE))
        told = error.window
        if told is not None and (self.window is None or told < self.window.tokens):
            self.window = ContextWindow(told, "the server's error")
        elif self.window is None:
            # No number at all: aim well below what was just refused.
            self.window = ContextWindow(
                int(estimate * self.token_scale) + REPLY_ROOM, "the server's error"
            )
        self.squeeze = min(self.squeeze, RETRY_SQUEEZE)
        numbers = ""
        if error.prompt_tokens and error.window:
            numbers = f" ({error.prompt_tokens:,} > {error.window:,} tokens)"
        elif error.window:
            numbers = f" (the window is {error.window:,} tokens)"
        return Notice(
            level="warning",
            message=f"the server said the request was too long{numbers}: compacted and retried",
        )

    def learn_scale(self, usage: dict[str, int]) -> None:
        """A server's own count of the last prompt corrects the estimate for later requests."""
        counted = usage.get("prompt_tokens")
        if isinstance(counted, int) and self.last_estimate > 0 and counted > self.last_estimate:
            self.token_scale = max(self.token_scale, min(counted / self.last_estimate, MAX_SCALE))


def summary_notice(compacted: int, tools_withdrawn: bool) -> str:
    """Why rounds went into the summary: the history window, or, with tools withdrawn, every
    round (said so: "2 older rounds" under a window of 5 read as a window that had misfired)."""
    if tools_withdrawn:
        # Under the panel that says the tools were withdrawn: what that does to the history,
        # without saying the withdrawal again.
        every = "the" if compacted == 1 else "all"
        summary = "sent as a summary of their results, with no tools to call"
        return f"{every} {plural(compacted, 'tool round')} so far {summary}"
    return f"history window: {plural(compacted, 'older tool round')} sent as a short summary"


def fit_notice(window: ContextWindow, summarised: int, cut: int, fits: bool, tokens: int) -> Notice:
    done = [f"{plural(summarised, 'older round')} summarised"] if summarised > 0 else []
    done += [f"{plural(cut, 'result')} cut"] if cut else []
    what = ", ".join(done) or "nothing left to compact"
    if fits:
        return Notice(message=f"fitted the request into the {window.tokens:,}-token window: {what}")
    return Notice(
        level="warning",
        message=f"the request (about {tokens:,} tokens) does not fit the {window.tokens:,}-token "
        f"window even compacted ({what}): sent anyway",
    )
