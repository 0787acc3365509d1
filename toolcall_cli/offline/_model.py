"""The offline model: it reads any strategy's request, decides, and writes the reply in that
strategy's wire format as an OpenAI-compatible server would (carelessly, where a fault says)."""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from toolcall_cli.models import _conversation as rq
from toolcall_cli.offline import _answering as say
from toolcall_cli.offline import _lexicon as lx
from toolcall_cli.offline import _planning as plan
from toolcall_cli.offline import _reading as rd
from toolcall_cli.offline._faults import Context, Decision, Fault
from toolcall_cli.wire import ModelRequest
from toolcall_cli.wire.completions import AssistantOutput, WireCall, respond, within

MAX_TURNS = 8  # turns of calls for one question; then it answers with what it has


class OfflineModel:
    """The default model: deterministic for a request and a seed, no network, no key."""

    name = "offline"

    def __init__(self, seed: int = 0, faults: Sequence[Fault] = ()) -> None:
        self.seed, self.faults = seed, tuple(faults)

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        body = request.body
        sampling = ("temperature", "top_p", "seed", "max_tokens")  # the same draws: its own seed
        key = digest(self.seed, {k: v for k, v in body.items() if k not in sampling})
        conversation = rq.read_conversation(body)
        streaming, zh = bool(body.get("stream")), lx.has_cjk(conversation.question)
        context = Context(conversation, streaming, key, zh)
        decision = decide(conversation)
        for fault in self.faults:
            decision = fault.alter_decision(decision, context)
        if conversation.format.must_call and conversation.tools and not decision.calls:
            decision = Decision(plan.forced(conversation))  # even where it would have answered
        # Ids unique in the conversation; an answer through final_answer needs one too.
        at, count = len(body.get("messages") or []), len(decision.calls) or 1
        ids = [f"call_{digest(self.seed, conversation.question, at, i)[:24]}" for i in range(count)]
        output = within(written(decision, ids, context), body)
        yield from respond(body, output, response_id=f"chatcmpl-{key[:24]}", rng=random.Random(key))


def decide(conversation: rq.Conversation) -> Decision:
    """The calls still needed, or the answer."""
    tools, turns = conversation.tools, conversation.turns
    reading = rd.read_question(conversation.question, tools)
    if not turns:
        return first_step(reading, conversation)
    history, last = [e for turn in turns for e in turn], turns[-1]
    retries = retried(reading, conversation, history)
    more = retries or plan.pending_calls(reading, tools, history)
    more = more or plan.conversion_calls(reading, tools, history)
    if not more or len(turns) >= MAX_TURNS:
        return Decision(text=say.final_answer(reading, turns, tools))
    if retries or any(e.unparsed for e in last):  # put right, or made again whole: say why
        failure = next(e for e in last if e.failed)
        head, items = say.error_lines(failure.result or "")
        why = say.stated(f"{head} {'; '.join(items)}".strip(), 160)
        lead = lx.phrase("retry", reading.zh, name=failure.call.name or more[0].name, reason=why)
        return Decision(tuple(more), lead)
    return Decision(tuple(more), lx.phrase("next", reading.zh, tools=tool_list(more)))


def retried(reading: rd.Reading, c: rq.Conversation, history: plan.History) -> tuple[rq.Call, ...]:
    """Each failed call of the last turn put right from its error, when it may be tried again."""
    failed = [e for e in c.turns[-1] if e.failed and not e.unparsed and not e.call.skipped]
    fixes = [(plan.fix_call(e, reading, c.tools), e) for e in failed]
    return tuple(f for f, e in fixes if f and plan.retry_allowed(f, e, history, c.tools))


def first_step(reading: rd.Reading, conversation: rq.Conversation) -> Decision:
    """The question's calls (some, when it lacks a value), or the question back, or words."""
    tools, zh = conversation.tools, reading.zh
    if plan.asks_currency_conversion(reading) and not any(map(plan.handles_currencies, tools)):
        return Decision(text=say.direct_answer(reading, tools, money=True))
    planned = plan.make_plan(reading, tools)
    dag = conversation.format.dag and planned.complete
    chain = plan.chained_calls(planned.calls, reading, tools) if dag else ()
    if chain:
        firsts, seconds = (tool_list([c for c in chain if bool(c.depends_on) == w]) for w in (0, 1))
        return Decision(chain, lx.phrase("chain", zh, firsts=firsts, seconds=seconds))
    if planned.calls:
        return Decision(planned.calls, lx.phrase("lead", zh, tools=tool_list(planned.calls)))
    if planned.wanted is not None:
        return Decision(text=say.ask_for(*planned.wanted, reading))
    return Decision(text=say.direct_answer(reading, tools))


def tool_list(calls: Sequence[rq.Call]) -> str:
    return ", ".join(f"{n} ×{k}" if k > 1 else n for n, k in Counter(c.name for c in calls).items())


def written(decision: Decision, ids: Sequence[str], c: Context) -> AssistantOutput:
    """The decision in the request's shape (tags, native calls, JSON), as careless as told."""
    quirks, answer = decision.quirks, json.dumps({"answer": decision.text}, ensure_ascii=False)
    fmt = c.conversation.format
    if not decision.calls and fmt.answer_tool:
        return AssistantOutput(None, (WireCall(ids[0], fmt.answer_tool, answer),), "tool_calls")
    if not decision.calls:
        return AssistantOutput(answer if fmt.shape == "json" else decision.text)
    payloads = [written_json(call_fields(call, fmt), quirks) for call in decision.calls]
    cut, rng = "truncated" in quirks, random.Random(f"{c.key}:truncated")
    if "broken_batch" in quirks:
        payloads[-1] = broken(payloads[-1], fmt.shape == "native")
    if fmt.shape != "text":
        payloads[-1] = cut_inside(payloads[-1], 0, rng) if cut else payloads[-1]
        finish = "length" if cut else "tool_calls" if fmt.shape == "native" else "stop"
        if fmt.shape == "json":  # this mode carries one call a reply
            return AssistantOutput(payloads[0], finish_reason=finish)
        names = [call.name for call in decision.calls]
        return AssistantOutput(None, tuple(map(WireCall, ids, names, payloads)), finish)
    return written_text(decision, payloads, c)


def written_text(decision: Decision, payloads: list[str], c: Context) -> AssistantOutput:
    """Calls in the text protocol: in the prompt's tags (or fences), with the faults' quirks."""
    quirks, cut, fmt = decision.quirks, "truncated" in decision.quirks, c.conversation.format
    rng = random.Random(f"{c.key}:truncated")
    opening, close, fenced = fmt.open_tag, fmt.close_tag, "code_fence" in quirks
    tagged = [f"```json\n{p}\n```" if fenced else opening + p + close for p in payloads]
    if "missing_close_tag" in quirks:
        tagged[-1] = tagged[-1].removesuffix(close)
    if cut:
        tagged[-1] = cut_inside(opening + payloads[-1], len(opening), rng)
    content = "\n".join([decision.text, *tagged]).lstrip("\n")
    if "prose_around" in quirks:  # after a cut there is no more to say
        prose = lx.phrase("prose", c.zh, call=content)
        content = prose.rsplit("\n\n", 1)[0] if cut else prose
    splits = tag_cuts(content, fmt, random.Random(f"{c.key}:split_tags"))
    cuts = splits if "split_tags" in quirks else ()
    return AssistantOutput(content, finish_reason="length" if cut else "stop", cuts=cuts)


def broken(payload: str, native: bool) -> str:
    """JSON broken beyond repair: no braces (native), a bare quote in a value (`"上"海"`)."""
    values = list(re.finditer(r'"((?:[^"\\]|\\.)*)"(?!\s*:)', payload))
    if native or not values:
        return payload.strip()[1:-1] if native else payload + '"'
    middle = values[-1].start(1) + max(1, len(values[-1][1]) // 2)
    return f'{payload[:middle]}"{payload[middle:]}'


def cut_inside(text: str, start: int, rng: random.Random) -> str:
    """`text` cut strictly inside text[start:], keeping at least a character of it."""
    return text[:start] if len(text) - start < 2 else text[: rng.randint(start + 1, len(text) - 1)]


def tag_cuts(content: str, fmt: rq.CallFormat, rng: random.Random) -> tuple[int, ...]:
    """Where stream chunks end inside the tags: after `<` (`</`), mid-name, before `>`."""
    cuts = []
    for tag in (fmt.open_tag, fmt.close_tag):
        slash = int(tag.startswith("</"))
        offsets = sorted({1, 1 + slash, len(tag) // 2 + slash, len(tag) - 1})
        for found in re.finditer(re.escape(tag), content):
            cuts += [found.start() + o for o in rng.sample(offsets, rng.randint(1, len(offsets)))]
    return tuple(sorted(set(cuts)))


def call_fields(call: rq.Call, fmt: rq.CallFormat) -> dict[str, Any]:
    """A call's JSON: its arguments (native), or its name and arguments as the prompt writes them;
    with --dag, its name and what it waits for among them (native's reserved ones) or beside."""
    native = fmt.shape == "native"
    fields = dict(call.arguments) if native else {"name": call.name, "arguments": call.arguments}
    ref, waits = (rq.RESERVED_ID, rq.RESERVED_DEPENDS) if native else (rq.ID_KEY, rq.DEPENDS_KEY)
    if fmt.dag and call.ref:
        fields = {**fields, ref: call.ref} if native else {ref: call.ref, **fields}
    return fields | ({waits: list(call.depends_on)} if fmt.dag and call.depends_on else {})


def written_json(value: Any, quirks: frozenset[str] = frozenset()) -> str:
    """JSON as written; with quirks as carelessly as models write it: `{'a': 1}`, `{a: 1,}`."""
    if isinstance(value, str) and "single_quotes" in quirks:
        inner = json.dumps(value, ensure_ascii=False)[1:-1].replace('\\"', '"')
        return "'" + inner.replace("'", "\\'") + "'"
    careless = quirks & {"single_quotes", "unquoted_keys", "trailing_comma"}
    if not careless or not isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    items = [written_json(item, quirks) for item in value] if isinstance(value, list) else []
    for key, item in value.items() if isinstance(value, dict) else ():
        bare = "unquoted_keys" in quirks and re.fullmatch(r"[A-Za-z_]\w*", str(key), re.A)
        name = key if bare else written_json(str(key), quirks)
        items.append(f"{name}: {written_json(item, quirks)}")
    comma = "," if items and "trailing_comma" in quirks else ""
    ends = "[]" if isinstance(value, list) else "{}"
    return f"{ends[0]}{', '.join(items)}{comma}{ends[1]}"


def digest(*parts: object) -> str:
    text = "|".join(json.dumps(p, ensure_ascii=False, sort_keys=True, default=str) for p in parts)
    return hashlib.sha256(text.encode()).hexdigest()
