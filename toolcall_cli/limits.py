"""The run's limits, with every default written once: apart from loop.py, so that `--help` shows
them without importing the loop (and the tools and HTTP client behind it)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from toolcall_cli.models.base import (
    MAX_LINE_BYTES,
    MAX_REPLY_CHARS,
    MAX_RESPONSE_BYTES,
    REQUEST_TIMEOUT,
)
from toolcall_cli.wire import ContextWindow

GroundingMode = Literal["off", "warn", "check"]
"""--grounding: figures from nowhere in a call's arguments or an answer are not checked (off),
shown (warn), or also refused once and nudged once (check)."""
GROUNDING_MODES: tuple[GroundingMode, ...] = ("off", "warn", "check")


@dataclass(frozen=True)
class Limits:
    max_iterations: int = 5
    tool_timeout: float = 10.0
    """Default per-tool timeout in seconds; a tool may declare its own."""
    run_timeout: float | None = None
    """Seconds for the whole run: model requests, tools and all."""
    max_failed_rounds: int = 3
    """After this many tool rounds in a row without progress (every call failed or repeated
    an earlier one), tools are withdrawn and the model is told to answer."""
    max_repeated_rounds: int = 1
    """After this many tool rounds in a row that only repeated earlier calls (every result was
    one the model already had), tools are withdrawn at once. A repeat can learn nothing new; a
    weak model that repeats once repeats until the limit (Qwen2.5-0.5B called get_weather for
    Paris five times, then answered right only in the best-effort answer past the limit).
    Failed rounds keep their own, longer count: the model can correct a failed call."""
    max_result_chars: int = 4000
    """Longer tool results are cut before they go back to the model."""
    history_rounds: int | None = 5
    """Tool rounds sent in full; older ones are compacted into a summary. None keeps all."""
    max_question_chars: int = 8000
    last_answer: bool = True
    """At the iteration limit, one more request without tools, for a best-effort answer."""
    grounding: GroundingMode = "warn"
    """Whether figures in calls and answers must come from the question or the results. warn
    (the default) shows a figure from nowhere; check also refuses such a call once (sent
    again, it runs) and nudges such an answer once (see toolcall_cli.grounding). check is not
    the default until the bench's held-out half shows it helps: it changes what a run does."""
    max_calls_per_reply: int = 8
    """Calls of one reply past this many are not run; the model is told so in one note. A
    runaway small model wrote 119 calls in one reply, whose results overflowed its context;
    a real question needs a few calls a reply (four cities, two conversions), so 8 leaves
    room and still bounds what one reply can cost."""
    max_reply_chars: int = MAX_REPLY_CHARS
    """One reply's text, counted from the chunks whatever the model: content, reasoning and
    tool-call names and arguments. Longer, and the model has failed (it is not answering)."""
    # The loop does not use these: they bound each HTTP request (see models.base), and live here
    # so that every limit has its default in one place.
    max_response_bytes: int = MAX_RESPONSE_BYTES
    max_line_bytes: int = MAX_LINE_BYTES
    request_timeout: float = REQUEST_TIMEOUT
    context_window: ContextWindow | None = None
    """The model's context window as the user gave it (--context-window, a profile); None asks
    the model, which may not know (then requests are not fitted)."""


def question_refused(question: str, limits: Limits) -> str | None:
    """Why a question is refused before anything is sent or shown, if it is: its length, no
    words at all, or bytes that were not UTF-8 (Python hands those over as lone surrogates, which
    no model can be sent, and the offline model cannot even read)."""
    if len(question) > limits.max_question_chars:
        return (
            f"the question is {len(question):,} characters; "
            f"the limit is {limits.max_question_chars:,}"
        )
    if not question.strip():
        return "the question is empty"
    bad = re.search("[\ud800-\udfff]", question)
    if bad is not None:
        return (
            f"the question is not UTF-8 text (a bad byte at character {bad.start() + 1}); "
            "is the terminal's encoding UTF-8?"
        )
    return None
