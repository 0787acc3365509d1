"""The offline model: it reads any strategy's request, decides what to say, and writes it in that
strategy's wire format exactly as an OpenAI-compatible server would. Faults plug in between
deciding and writing."""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from toolcall_cli.offline._answering import (
    ask_for,
    direct_answer,
    final_answer,
    no_currency_tool,
    short_error,
)
from toolcall_cli.offline._faults import FaultBase, FaultContext
from toolcall_cli.offline._planning import (
    asks_currency_conversion,
    chained_calls,
    context_calls,
    conversion_calls,
    fix_call,
    handles_currencies,
    make_plan,
    pending_calls,
    retry_allowed,
)
from toolcall_cli.offline._reading import Reading, read_question
from toolcall_cli.offline._request import (
    DEPENDS_KEY,
    ID_KEY,
    RESERVED_DEPENDS,
    RESERVED_ID,
    Call,
    CallFormat,
    Conversation,
    Decision,
    read_conversation,
)
from toolcall_cli.wire import ModelRequest
from toolcall_cli.wire.completions import AssistantOutput, WireCall, respond

MAX_TURNS = 8
"""Turns of calls for one question; then it answers with what it has."""
_SAMPLING = ("temperature", "top_p", "seed", "max_tokens")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class OfflineModel:
    """The default model: deterministic for a request and a seed, no network, no key."""

    name = "offline"

    def __init__(self, seed: int = 0, faults: Sequence[FaultBase] = ()) -> None:
        self.seed = seed
        self.faults = tuple(faults)

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        body = request.body
        # Sampling changes nothing here (the seed is the model's own): it leaves the draws alone.
        key = digest(self.seed, {k: v for k, v in body.items() if k not in _SAMPLING})
        conversation = read_conversation(body)
        context = FaultContext(conversation, bool(body.get("stream")), key)
        decision = decide(conversation)
        for fault in self.faults:
            decision = fault.alter_decision(decision, context)
        # Ids unique in the conversation; an answer through final_answer needs one too.
        position = len(body.get("messages") or [])
        ids = [
            f"call_{digest(self.seed, conversation.question, position, i)[:24]}"
            for i in range(max(len(decision.calls), 1))
        ]
        output = written(decision, conversation.format, ids)
        for fault in self.faults:
            output = fault.alter_output(output, context)
        yield from respond(body, output, response_id=f"chatcmpl-{key[:24]}", rng=random.Random(key))


def decide(conversation: Conversation) -> Decision:
    """The calls still needed, or the answer."""
    tools, turns = conversation.tools, conversation.turns
    reading = read_question(conversation.question, tools)
    if not turns:
        return first_step(reading, conversation)
    history = [e for turn in turns for e in turn]
    if len(turns) < MAX_TURNS:
        last = turns[-1]
        failed = [e for e in last if e.failed and not e.unparsed and not e.call.skipped]
        retries = [
            f for e in failed if (f := fix_call(e, reading, tools)) and retry_allowed(f, e, history)
        ]
        if retries:
            return Decision(tuple(retries), retry_lead_in(last, reading))
        more = pending_calls(reading, tools, history) or conversion_calls(reading, tools, history)
        if more:
            unread = any(e.unparsed for e in last)  # calls that could not be read go again, whole
            return Decision(
                tuple(more),
                retry_lead_in(last, reading) if unread else lead_in(more, reading, True),
            )
    return Decision(text=final_answer(reading, turns, tools))


def first_step(reading: Reading, conversation: Conversation) -> Decision:
    """The question's own calls; else what the chat makes of it; else a partial attempt; else
    ask for what the tool needs; else answer without tools."""
    tools = conversation.tools
    if asks_currency_conversion(reading) and not any(handles_currencies(t) for t in tools):
        return Decision(text=no_currency_tool(reading, tools))
    plan = make_plan(reading, tools)
    if plan.calls and plan.complete:
        chain = chained_calls(plan.calls, reading, tools) if conversation.format.dag else ()
        if chain:
            firsts = tool_list([c for c in chain if not c.depends_on])
            seconds = tool_list([c for c in chain if c.depends_on])
            if reading.zh:
                return Decision(chain, f"好的，我调用 {firsts}，并把它的结果直接交给 {seconds}。")
            return Decision(
                chain, f"Let me call {firsts} and pass its result straight to {seconds}."
            )
        return Decision(plan.calls, lead_in(plan.calls, reading))
    calls = tuple(context_calls(reading, tools, conversation.earlier)) or plan.calls
    if calls:
        return Decision(calls, lead_in(calls, reading))
    if plan.wanted is not None:
        return Decision(text=ask_for(plan.wanted.spec, plan.wanted.missing, reading))
    return Decision(text=direct_answer(reading, tools))


def tool_list(calls: Sequence[Call]) -> str:
    return ", ".join(f"{n} ×{c}" if c > 1 else n for n, c in Counter(c.name for c in calls).items())


def lead_in(calls: Sequence[Call], reading: Reading, follow_up: bool = False) -> str:
    tools = tool_list(calls)
    if follow_up:
        return f"拿到结果了，接下来调用 {tools}。" if reading.zh else f"Got that. Next, {tools}."
    return (
        f"好的，我先调用 {tools} 获取需要的信息。"
        if reading.zh
        else f"Let me call {tools} to find out."
    )


def retry_lead_in(turn: Sequence[Any], reading: Reading) -> str:
    failed = next(e for e in turn if e.failed)
    reason = short_error(failed.result or "")
    if reading.zh:
        return f"上一次调用 {failed.call.name} 出错了（{reason}），我修正后重试。"
    return f"The call to {failed.call.name} failed ({reason}); let me fix it and try again."


def written(decision: Decision, fmt: CallFormat, ids: Sequence[str]) -> AssistantOutput:
    """The decision in the request's wire shape: text with tags, native calls, or JSON."""
    if not decision.calls:
        if fmt.shape == "json":
            return AssistantOutput(json.dumps({"answer": decision.text}, ensure_ascii=False))
        if fmt.answer_tool:
            answer = json.dumps({"answer": decision.text}, ensure_ascii=False)
            return AssistantOutput(None, (WireCall(ids[0], fmt.answer_tool, answer),), "tool_calls")
        return AssistantOutput(decision.text)
    payloads = [written_json(call_fields(c, fmt), decision.style) for c in decision.calls]
    if fmt.shape == "native":
        calls = tuple(
            WireCall(i, c.name, p) for i, c, p in zip(ids, decision.calls, payloads, strict=True)
        )
        return AssistantOutput(None, calls, "tool_calls")
    if fmt.shape == "json":
        return AssistantOutput(payloads[0])  # this mode carries one call a reply
    return AssistantOutput("\n".join([decision.text, *map(fmt.tagged, payloads)]).lstrip("\n"))


def call_fields(call: Call, fmt: CallFormat) -> dict[str, Any]:
    """A call's JSON: its arguments (native), or its name and arguments as the prompt's
    example writes them; with --dag, its own name and what it waits for beside them (text)
    or among them, as the reserved arguments (native)."""
    native = fmt.shape == "native"
    fields = dict(call.arguments) if native else {"name": call.name, "arguments": call.arguments}
    if fmt.dag:
        id_key, depends_key = (RESERVED_ID, RESERVED_DEPENDS) if native else (ID_KEY, DEPENDS_KEY)
        if call.ref:
            fields = {**fields, id_key: call.ref} if native else {id_key: call.ref, **fields}
        if call.depends_on:
            fields[depends_key] = list(call.depends_on)
    return fields


def written_json(value: Any, style: frozenset[str] = frozenset()) -> str:
    """JSON as the model writes it; with a style, as carelessly as models do."""
    if isinstance(value, str) and "single_quotes" in style:
        inner = json.dumps(value, ensure_ascii=False)[1:-1].replace('\\"', '"')
        return "'" + inner.replace("'", "\\'") + "'"
    if not style or not isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        items = [written_json(item, style) for item in value]
    else:
        bare = "unquoted_keys" in style
        keys = [str(k) for k in value]
        keys = [k if bare and _IDENTIFIER.fullmatch(k) else written_json(k, style) for k in keys]
        items = [
            f"{k}: {written_json(v, style)}" for k, v in zip(keys, value.values(), strict=True)
        ]
    ends, comma = (
        ("{}" if isinstance(value, dict) else "[]"),
        ("," if items and "trailing_comma" in style else ""),
    )
    return f"{ends[0]}{', '.join(items)}{comma}{ends[1]}"


def digest(*parts: object) -> str:
    text = "|".join(json.dumps(p, ensure_ascii=False, sort_keys=True, default=str) for p in parts)
    return hashlib.sha256(text.encode()).hexdigest()
