"""Which tools each request carries when there are too many to send them all (--retrieve): the
best ranked for the question and the latest turn, plus a search_tools meta-tool with which the
model finds the others; what it finds goes into the next request."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from toolcall_cli.events import ChosenTool, Event, Notice, ToolsChosen
from toolcall_cli.history import preview
from toolcall_cli.messages import Message, ToolCall, ToolSpec
from toolcall_cli.tools.registry import Tool, ToolRegistry
from toolcall_cli.tools.retrieval import (
    LEXICAL,
    EmbedRanker,
    Query,
    Ranker,
    RankingFailed,
    Scored,
    ranked,
)
from toolcall_cli.wording import plural

SEARCH_TOOLS = "search_tools"
BUILT_IN = "built-in"
"""Tool.source of the tools toolcall itself adds (search_tools)."""
DEFAULT_K = 6
"""Tools a request carries when retrieval comes on by itself: few enough that a small model
reads them all, and room for the one it needs beside near misses."""
DEFAULT_OVER = 20
"""Past this many tools retrieval comes on by itself: beyond about twenty, models pick the
wrong tool and the schema crowds the context (issue 13)."""
LATEST_TURN_WEIGHT = 0.4
"""The conversation's previous turn counts for less than the question: a follow-up ("and in
Paris?") leans on it, but the question says what is wanted."""
LATEST_TURN_CHARS = 1000
SEARCH_RESULTS = 5
"""The most tools one search_tools call names."""
DESCRIPTION_CHARS = 160
"""How much of each found tool's description search_tools gives back."""


@dataclass(frozen=True)
class Retrieval:
    """How a session chooses the tools a request carries."""

    k: int | None = None
    """--retrieve: the most tools a request carries; None chooses by itself (DEFAULT_K past
    `over` tools, else all); 0 turns retrieval off."""
    over: int = DEFAULT_OVER
    ranker: Ranker = field(default=LEXICAL)

    def budget(self, tools: int) -> int | None:
        """The most tools a request may carry for a registry of `tools`; None: all, unranked."""
        if self.k == 0:
            return None
        if self.k is not None:
            return self.k
        return DEFAULT_K if tools > self.over else None


SEARCH_SPEC = ToolSpec(
    name=SEARCH_TOOLS,
    description="Find more tools. This request offers only some of the registered tools; when "
    "none of them fits the task, describe what you need and the best matches are offered in "
    "the next request.",
    parameters={
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "What the tool should do, in a few words (e.g. 'currency "
                "exchange rate').",
            }
        },
        "required": ["query"],
    },
)


RankingKey = tuple[tuple[str, ...], tuple[tuple[str, float], ...]]
"""The tools' names and the query a ranking was made for."""


class Choosing:
    """One run's choice of tools, request by request. `registry` is the one the run calls
    tools from: the session's, plus search_tools when not every tool can be sent."""

    def __init__(self, retrieval: Retrieval, tools: ToolRegistry) -> None:
        self._ranker = retrieval.ranker
        self._tools = tools
        self.budget = retrieval.budget(len(tools))
        self.found: list[str] = []
        """Tools search_tools found this run, the latest first."""
        self.called: list[str] = []
        """Registered tools the model called this run, in order: they stay in the requests
        that follow, so the set a run works with changes only by what the model asked for."""
        self.sent: set[str] = set()
        self._lock = threading.Lock()  # search_tools runs in the tool pool's threads
        self.registry = tools
        self.notices: list[Notice] = []
        self._last: tuple[RankingKey, list[Scored], str] | None = None
        """The latest ranking, with the tools and query it was made for (see _ranking)."""
        if self.budget is not None and len(tools) > self.budget:
            if SEARCH_TOOLS in tools:
                self.notices.append(
                    Notice(
                        level="warning",
                        message=f"a registered tool is named {SEARCH_TOOLS}: the built-in "
                        "search for more tools is left out",
                    )
                )
            else:
                self.registry = ToolRegistry([*tools, self._search_tool()])

    @property
    def on(self) -> bool:
        return self.budget is not None

    @property
    def searching(self) -> bool:
        return self.registry is not self._tools

    def choose(
        self, iteration: int, question: str, earlier: Sequence[Message]
    ) -> tuple[list[ToolSpec], list[Event]]:
        """The specs this request carries, and the events that show the choice. `earlier` is
        the conversation before this question.

        The query is the same for every request of a run (the question, and the previous
        turn), so the ranked part of the set stays put: tools that come and go between
        iterations tempt a model to call the newcomers on a question it has already answered,
        and a changed tool list makes a server's prompt cache start over. What does change it
        is the model: tools it found with search_tools, and tools it called, are kept."""
        specs = self._tools.specs()
        events: list[Event] = [*self.notices]
        self.notices.clear()
        query = [(question, 1.0), (previous_turn(earlier), LATEST_TURN_WEIGHT)]
        scored, ranker = self._ranking(query, specs, events)
        chosen, found = self._picked(scored, self.budget or len(specs))
        self.sent = {tool.name for tool in chosen}
        by_name = {spec.name: spec for spec in [*specs, SEARCH_SPEC]}
        events.append(
            ToolsChosen(
                iteration=iteration,
                total=len(specs),
                sent=tuple(chosen),
                ranker=ranker,
                added=tuple(found),
            )
        )
        return [by_name[tool.name] for tool in chosen], events

    def _picked(self, scored: list[Scored], budget: int) -> tuple[list[ChosenTool], list[str]]:
        """The tools within `budget`: first those the model found with search_tools, then
        those it called, then the best ranked; search_tools last. And the ones it found."""
        slots = budget - 1 if self.searching else budget
        with self._lock:
            found = [name for name in self.found if name in self._tools][:slots]
        kept = [n for n in dict.fromkeys(self.called) if n in self._tools and n not in found]
        kept = kept[: max(slots - len(found), 0)]
        rest = [s for s in scored if s.name not in found and s.name not in kept]
        rest = rest[: max(slots - len(found) - len(kept), 0)]
        score = {s.name: s.score for s in scored}
        chosen = [ChosenTool(name, score.get(name, 0.0), found=True) for name in found]
        chosen += [ChosenTool(name, score.get(name, 0.0)) for name in kept]
        chosen += [ChosenTool(s.name, s.score) for s in rest]
        if self.searching:
            chosen.append(ChosenTool(SEARCH_TOOLS, None))
        return chosen, found

    def _ranking(
        self, query: Query, specs: list[ToolSpec], events: list[Event]
    ) -> tuple[list[Scored], str]:
        """The run's ranking, worked out once: the query is the same for every request, so
        only a change to the tools (a server withdrawn) ranks again. An embed ranker would
        otherwise ask its endpoint for the question's vector on every request."""
        key: RankingKey = (tuple(spec.name for spec in specs), tuple(query))
        if self._last is None or self._last[0] != key:
            self._last = (key, *self._ranked(query, specs, events))
        return self._last[1], self._last[2]

    def _ranked(
        self, query: Query, specs: list[ToolSpec], events: list[Event]
    ) -> tuple[list[Scored], str]:
        try:
            scored = ranked(query, specs, self._ranker)
        except RankingFailed as error:
            # Said once: asking a failing endpoint again each request would only repeat the
            # same line and wait the same timeout.
            self._ranker = LEXICAL
            events.append(
                Notice(
                    level="warning", message=f"{error}; ranked lexically for the rest of the run"
                )
            )
            return ranked(query, specs, LEXICAL), LEXICAL.name
        problem = self._ranker.cache_problem() if isinstance(self._ranker, EmbedRanker) else None
        if problem is not None:
            events.append(Notice(level="warning", message=problem))
        return scored, self._ranker.name

    def calls_made(self, calls: Sequence[ToolCall]) -> list[Notice]:
        """Note the tools a reply called (they stay in the requests that follow). A call to a
        registered tool this request did not carry still runs (the tool is known), but the
        view says the model reached past what it was offered."""
        if not self.on:
            return []
        self.called += [call.name for call in calls if call.name != SEARCH_TOOLS]
        return [
            Notice(
                message=f"the model called {name}, which this request did not carry; it is "
                "a registered tool, so it runs"
            )
            for name in dict.fromkeys(call.name for call in calls)
            if name in self._tools and name not in self.sent
        ]

    def search(self, query: str) -> str:
        """search_tools: the best matches among the tools the request did not carry."""
        with self._lock:
            offered = set(self.sent)
        others = [spec for spec in self._tools.specs() if spec.name not in offered]
        try:
            scored = ranked([(query, 1.0)], others, self._ranker)
        except RankingFailed:
            scored = ranked([(query, 1.0)], others, LEXICAL)
        hits = [s for s in scored if s.score > 0][:SEARCH_RESULTS]
        if not hits:
            return f"No other tool matches {query!r}. Answer with the tools you have."
        with self._lock:
            names = [hit.name for hit in hits]
            self.found = names + [name for name in self.found if name not in names]
        described = {spec.name: spec.description for spec in others}
        lines = [
            f"- {h.name} (score {h.score:.2f}): {preview(described[h.name], DESCRIPTION_CHARS)}"
            for h in hits
        ]
        return "\n".join(
            [f"Found {plural(len(hits), 'tool')}; they are offered in the next request:", *lines]
        )

    def _search_tool(self) -> Tool:
        def search_tools(query: str) -> str:
            return self.search(query)

        return Tool(
            spec=SEARCH_SPEC,
            func=search_tools,
            source=BUILT_IN,
            permission="read",
            cacheable=False,  # what it finds depends on what the request carried
        )


def previous_turn(earlier: Sequence[Message]) -> str:
    """The conversation's previous turn as text: its question and its answer (in chat, what a
    follow-up such as "and in Paris?" leans on); empty at a conversation's start."""
    question = next((m.content for m in reversed(earlier) if m.role == "user"), None)
    answer = next((m.content for m in reversed(earlier) if m.role == "assistant"), None)
    text = " ".join(part for part in (question, answer) if part)
    return text[:LATEST_TURN_CHARS]
