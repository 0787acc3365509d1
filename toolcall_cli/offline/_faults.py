"""Faults: the model misbehaving as real models do, in what it decides (a wrong name) or how it
writes it (a reply cut off). Each knows its mistakes by the calls shown, never by error words."""

from __future__ import annotations

import difflib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from toolcall_cli.messages import ToolSpec
from toolcall_cli.models import _conversation as rq
from toolcall_cli.offline import _lexicon as lx
from toolcall_cli.offline import _reading as rd

FAULT_KINDS = {
    "no_tool": "硬答: answers from 'memory' without calling the tool it needs (undetectable)",
    "unknown_tool": "calls a tool name that does not exist but is close to a real one",
    "wrong_param": "uses a wrong argument name (City, ciity or weather_city instead of city)",
    "missing_arg": "leaves a required argument out",
    "extra_arg": "adds an argument the tool does not take",
    "wrong_type": 'sends a number or boolean as a string ("5" for 5)',
    "repeat_call": "calls the same tool with the same arguments again after it has the result",
    "single_quotes": "writes the call's JSON with single quotes",
    "trailing_comma": "writes the call's JSON with trailing commas",
    "unquoted_keys": "writes the call's JSON with unquoted keys",
    "code_fence": "writes the call as a ```json fenced block instead of tags (text protocol)",
    "missing_close_tag": "leaves out the last </tool_call> (text protocol)",
    "prose_around": "wraps the call in chatty prose before and after (text protocol)",
    "broken_batch": "makes several calls where one has broken JSON",
    "truncated": "the reply is cut off inside a call (finish_reason length)",
    "split_tags": "streams chunks that split <tool_call> / </tool_call> tags on purpose",
}
"""Each kind (as `--faults` takes it) and what it does, in order: what it decides, then how."""
TEXT_ONLY = ("code_fence", "missing_close_tag", "prose_around", "split_tags")
"""Native calls and JSON mode have no tags to fence, drop or split (nor JSON mode a batch)."""
TYPED = ("number", "integer", "boolean")


@dataclass(frozen=True)
class Decision:
    """Calls with a lead-in sentence, or the answer; and how carelessly it is written: the
    faults that fired on that (single_quotes, truncated...)."""

    calls: tuple[rq.Call, ...] = ()
    text: str = ""
    quirks: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Context:
    conversation: rq.Conversation
    streaming: bool
    key: str
    """The request's digest: each fault draws from its own RNG seeded with it."""
    zh: bool  # the question is in Chinese: so is what the model says

    def tool(self, name: str) -> ToolSpec:
        return rd.tool_named(self.conversation.tools, name)

    def knows(self, name: str) -> bool:
        return any(t.name == name for t in self.conversation.tools)

    def made(self) -> list[rq.Exchange]:
        return [e for turn in self.conversation.turns for e in turn]


class Fault:
    """One kind of misbehaviour, at a rate."""

    def __init__(self, kind: str, rate: float = 1.0) -> None:
        self.kind, self.rate = kind, rate
        self.shapes = frozenset(("text",) if kind in TEXT_ONLY else ("text", "native", "json"))
        self.shapes -= {"json"} if kind == "broken_batch" else set()

    def alter_decision(self, decision: Decision, c: Context) -> Decision:
        return DECIDING.get(self.kind, quirk)(self, decision, c)

    def rng(self, c: Context) -> random.Random:
        return random.Random(f"{c.key}:{self.kind}")

    def fires(self, c: Context, applicable: bool) -> bool:
        """At its first chance (at `rate`); told of it, again once in five, never thrice running."""
        if not applicable or self.rate <= 0 or c.conversation.format.shape not in self.shapes:
            return False
        chance = random.Random(f"{c.key}:{self.kind}:fires").random()
        made, turns = SHOWS.get(self.kind), c.conversation.turns[-2:]
        shown = [any(e.failed and made(e, c) for e in t) for t in turns] if made else []
        if shown[-1:] == [True] and shown[:-1] != [True]:  # shown last turn, not the one before
            return chance >= 0.8  # told of its mistake, it fixes it four times in five
        # An earlier reply could have carried it: it fires fresh only at its first chance.
        had = CHANCED[self.kind](c) if self.kind in CHANCED else c.conversation.replies > 0
        return not had and chance < self.rate


def changed(decision: Decision, index: int, **changes: Any) -> Decision:
    calls = list(decision.calls)
    calls[index] = replace(calls[index], **changes)
    return replace(decision, calls=tuple(calls))


def unlike(name: str, allowed: list[str]) -> bool:
    """No name that could be taken for a misspelt or renamed real parameter."""
    shared = any(set(rd.split_identifier(name)) & set(rd.split_identifier(a)) for a in allowed)
    return not shared and not difflib.get_close_matches(name, allowed, n=1, cutoff=0.5)


def odd_argument(e: rq.Exchange, c: Context, alike: bool) -> bool:
    """A call holds an argument its tool does not take: like one it does, or unlike any."""
    allowed = list(rq.properties(c.tool(e.call.name)))
    return any(
        a not in allowed and unlike(a, allowed) != alike for a in e.call.arguments if allowed
    )


def taken(call: rq.Call, c: Context, kinds: tuple[str, ...] = ()) -> list[str]:
    """The call's required arguments, or those of the schema types `kinds`."""
    spec = c.tool(call.name)
    names = [n for n, s in rq.properties(spec).items() if s.get("type") in kinds]
    return [n for n in (names if kinds else rq.required(spec)) if n in call.arguments]


def no_tool(fault: Fault, decision: Decision, c: Context) -> Decision:
    """硬答: a plausible invented answer instead of the calls it needs."""
    if not fault.fires(c, bool(decision.calls)):
        return decision
    said = (invented(call, c, fault.rng(c)) for call in decision.calls)
    return Decision(text="\n".join(dict.fromkeys(said)))


def invented(call: rq.Call, c: Context, rng: random.Random) -> str:
    spec = c.tool(call.name)
    given = {rd.param_role(n, s): call.arguments.get(n) for n, s in rq.properties(spec).items()}
    about = " ".join(rd.split_identifier(call.name)) + f" {spec.description}"
    place, expression, guess = given.get("place"), given.get("expression"), rng.randint(16, 30)
    if place and "weather" in rd.concepts_of(about):
        return lx.phrase("weather", c.zh, place=place, temp=guess)
    if isinstance(expression, str):  # mental arithmetic, never computed: a number said boldly
        return f"{expression} = {rng.randint(2, 999)}"
    return lx.phrase("guess", c.zh, guess=guess)


def unknown_tool(fault: Fault, decision: Decision, c: Context) -> Decision:
    """A tool name that does not exist, close to the real one: `getWeather`, `get_weather_info`."""
    if not fault.fires(c, bool(decision.calls)):
        return decision
    name = decision.calls[0].name
    words = rd.split_identifier(name) or [name]
    verb = "_".join(words[1:]) if len(words) > 1 and words[0] in ("get", "fetch") else f"get_{name}"
    tried = [words[0] + "".join(w.title() for w in words[1:]), f"{name}_info", f"{name}_tool", verb]
    close = [n for n in tried if difflib.SequenceMatcher(None, n, name).ratio() >= 0.6]
    names = [n for n in dict.fromkeys(close) if not c.knows(n)] or [f"{name}_v2"]
    return changed(decision, 0, name=fault.rng(c).choice(names))


def wrong_param(fault: Fault, decision: Decision, c: Context) -> Decision:
    """A required argument named wrongly, from no table the engine knows: its words run
    together (`City`, `fromUnit`), a letter doubled (`ciity`), the tool's topic in front."""
    found = next(((i, call) for i, call in enumerate(decision.calls) if call.arguments), None)
    if found is None or not fault.fires(c, True):
        return decision
    (index, call), rng = found, fault.rng(c)
    name = [*taken(call, c), *call.arguments][0]
    allowed = set(rq.properties(c.tool(call.name))) or set(call.arguments)
    tried = misnamed(name, call.name, rng.randrange(len(name)) if name else 0)
    wrong = rng.choice([o for o in tried if o not in allowed] or [f"{name}_value"])
    renamed = {(wrong if k == name else k): v for k, v in call.arguments.items()}
    return changed(decision, index, arguments=renamed)


def misnamed(name: str, tool: str, at: int) -> tuple[str, ...]:
    """Names a careless model writes for `name`: run together, a letter doubled, topic first."""
    words = rd.split_identifier(name) or [name]
    joined = words[0] + "".join(w.title() for w in words[1:]) if len(words) > 1 else name.title()
    topic = "".join(rd.split_identifier(tool)[-1:]) or "x"
    return joined, name[: at + 1] + name[at:], f"{topic}_{name}"


def missing_arg(fault: Fault, decision: Decision, c: Context) -> Decision:
    found = [(i, n) for i, call in enumerate(decision.calls) for n in taken(call, c)]
    if not found or not fault.fires(c, True):
        return decision
    index, name = found[0]
    kept = {k: v for k, v in decision.calls[index].arguments.items() if k != name}
    return changed(decision, index, arguments=kept)


def extra_arg(fault: Fault, decision: Decision, c: Context) -> Decision:
    if not fault.fires(c, bool(decision.calls)):
        return decision
    call = decision.calls[0]
    allowed = list(rq.properties(c.tool(call.name))) or list(call.arguments)
    options = (("verbose", True), ("lang", "zh"), ("format", "json"))
    unrelated = [(n, v) for n, v in options if unlike(n, allowed)]
    name, value = fault.rng(c).choice(unrelated or [("xtra", 1)])
    return changed(decision, 0, arguments={**call.arguments, name: value})


def wrong_type(fault: Fault, decision: Decision, c: Context) -> Decision:
    """A number or boolean sent as text ("25" for 25): the engine coerces it, silently."""
    found = [(i, n) for i, call in enumerate(decision.calls) for n in taken(call, c, TYPED)]
    if not found or not fault.fires(c, True):
        return decision
    index, name = found[0]
    value = decision.calls[index].arguments[name]
    text = json.dumps(value) if isinstance(value, bool) else f"{value}"
    return changed(decision, index, arguments={**decision.calls[index].arguments, name: text})


def repeat_call(fault: Fault, decision: Decision, c: Context) -> Decision:
    """With the result in hand, the same call again instead of the answer."""
    done = [e for e in c.made() if not e.failed]
    if not fault.fires(c, not decision.calls and bool(done) and bool(c.conversation.tools)):
        return decision
    call = replace(done[-1].call, ref=None, depends_on=())  # as it ran: it waits for nothing
    return Decision((call,), lx.phrase("again", c.zh, name=call.name))


def quirk(fault: Fault, decision: Decision, c: Context) -> Decision:
    """A careless way to write the reply, where it has a chance: fenced, unclosed, chatty, a
    broken call in a batch, cut off, tags split across stream chunks."""
    calls, fenced = decision.calls, "code_fence" in decision.quirks
    text = c.conversation.format.shape == "text"
    chance = bool(calls) and {
        "missing_close_tag": not fenced,
        "broken_batch": len(calls) > 1 and (not fenced if text else bool(calls[-1].arguments)),
        "truncated": not (text and fenced),
        "split_tags": c.streaming and not fenced,
    }.get(fault.kind, True)
    if not fault.fires(c, chance):
        return decision
    return replace(decision, quirks=decision.quirks | {fault.kind})


Change = Callable[[Fault, Decision, Context], Decision]
_DECIDE = (no_tool, unknown_tool, wrong_param, missing_arg, extra_arg, wrong_type, repeat_call)
DECIDING: dict[str, Change] = dict(zip(list(FAULT_KINDS)[:7], _DECIDE, strict=True))
"""How each fault on what the model decides changes it; the others are quirks."""
SHOWS: dict[str, Callable[[rq.Exchange, Context], bool]] = {
    "unknown_tool": lambda e, c: e.call.written is None and not c.knows(e.call.name),
    "wrong_param": lambda e, c: odd_argument(e, c, alike=True),
    "extra_arg": lambda e, c: odd_argument(e, c, alike=False),
    "missing_arg": lambda e, c: (
        e.call.written is None and len(taken(e.call, c)) < len(rq.required(c.tool(e.call.name)))
    ),
    "broken_batch": lambda e, c: e.call.written is not None,
    "truncated": lambda e, c: e.call.written is not None,
}
"""How a kind's mistake shows in a call, as the conversation shows it."""
CHANCED: dict[str, Callable[[Context], bool]] = {
    "wrong_type": lambda c: any(taken(e.call, c, TYPED) for e in c.made()),
    "repeat_call": lambda c: (
        len({json.dumps([e.call.name, e.call.arguments], default=str) for e in c.made()})
        < len(c.made())
    ),
    "broken_batch": lambda c: any(len(t) > 1 for t in c.conversation.turns),
}
"""Whether an earlier reply already had its chance, where not every earlier reply did."""
