"""Faults: the model misbehaving as real models do, so that each recovery path can be seen. Each
changes what the model decides (a wrong name, a missing argument) or how it writes it (single
quotes, a reply cut off). A fault fires with probability `rate` on its first opportunity; when
the conversation shows the mistake failed, it is made once more with probability 0.2, never a
third time in a row. What a fault sees of its own mistakes is the calls as the conversation
shows them, never the words of an error."""

from __future__ import annotations

import ast
import difflib
import json
import operator
import random
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from toolcall_cli.messages import ToolSpec
from toolcall_cli.offline import _lexicon as lx
from toolcall_cli.offline._reading import (
    mentions,
    param_role,
    properties,
    required,
    split_identifier,
)
from toolcall_cli.offline._request import (
    Call,
    CallFormat,
    Conversation,
    Decision,
    Exchange,
    Shape,
    read_object,
)
from toolcall_cli.wire.completions import AssistantOutput

CORRECTS_AFTER_ERROR = 0.8
ALL_SHAPES: frozenset[Shape] = frozenset({"text", "native", "json"})
TEXT_ONLY: frozenset[Shape] = frozenset({"text"})
"""Framing faults: beside native calls prose is normal, and JSON mode allows nothing around
its object; there are no tags to fence, drop or split."""


@dataclass(frozen=True)
class FaultContext:
    conversation: Conversation
    streaming: bool
    key: str
    """The request's digest: each fault draws from its own RNG seeded with it."""

    @property
    def format(self) -> CallFormat:
        return self.conversation.format

    def tool(self, name: str) -> ToolSpec | None:
        return next((t for t in self.conversation.tools if t.name == name), None)

    @property
    def zh(self) -> bool:
        return lx.has_cjk(self.conversation.question)


class FaultBase:
    """When a fault fires; each kind says how it applies (and to which wire shapes)."""

    kind: ClassVar[str]
    about: ClassVar[str]
    """One line for `toolcall faults`."""
    shapes: ClassVar[frozenset[Shape]] = ALL_SHAPES

    def __init__(self, rate: float = 1.0) -> None:
        self.rate = rate

    def alter_decision(self, decision: Decision, context: FaultContext) -> Decision:
        return decision

    def alter_output(self, output: AssistantOutput, context: FaultContext) -> AssistantOutput:
        return output

    def rng(self, context: FaultContext) -> random.Random:
        return random.Random(f"{context.key}:{self.kind}")

    def fires(self, context: FaultContext, applicable: bool) -> bool:
        if not applicable or self.rate <= 0 or context.format.shape not in self.shapes:
            return False
        chance = random.Random(f"{context.key}:{self.kind}:fires").random()
        if self.repeating(context):
            return chance >= CORRECTS_AFTER_ERROR
        return not self.had_opportunity(context) and chance < self.rate

    def had_opportunity(self, context: FaultContext) -> bool:
        """An earlier reply could have carried it: it fires fresh only on its first chance."""
        return context.conversation.replies > 0

    def repeating(self, context: FaultContext) -> bool:
        """The last turn shows this mistake failed, and the turn before does not."""
        turns = context.conversation.turns
        made = [any(e.failed and self.made(e, context) for e in turn) for turn in turns[-2:]]
        return bool(made) and made[-1] and not (len(made) > 1 and made[0])

    def made(self, exchange: Exchange, context: FaultContext) -> bool:
        """Whether a call as the conversation shows it holds this mistake."""
        return False


def with_call(decision: Decision, index: int, call: Call) -> Decision:
    return replace(decision, calls=(*decision.calls[:index], call, *decision.calls[index + 1 :]))


def unknown_arguments(exchange: Exchange, context: FaultContext) -> list[str]:
    spec = context.tool(exchange.call.name)
    return [a for a in exchange.call.arguments if spec and a not in properties(spec)]


def unlike(name: str, allowed: Sequence[str]) -> bool:
    """Not a name that could be taken for a misspelt or renamed real parameter."""
    close = difflib.get_close_matches(name, list(allowed), n=1, cutoff=0.5)
    return not close and not any(
        set(split_identifier(name)) & set(split_identifier(a)) for a in allowed
    )


# --- what the model decides --------------------------------------------------------------------


class NoTool(FaultBase):
    kind = "no_tool"
    about = "硬答: answers from 'memory' without calling the tool it needs (undetectable)"

    def alter_decision(self, decision: Decision, context: FaultContext) -> Decision:
        if not self.fires(context, bool(decision.calls)):
            return decision
        rng = self.rng(context)
        lines = [invented(call, context, rng) for call in decision.calls]
        return Decision(text="\n".join(dict.fromkeys(lines)))


_ARITHMETIC: dict[type[ast.AST], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


def invented(call: Call, context: FaultContext, rng: random.Random) -> str:
    """One confident sentence on what the call would have found, made up."""
    spec = context.tool(call.name)
    roles = {
        param_role(n, s): call.arguments.get(n)
        for n, s in (properties(spec).items() if spec else ())
    }
    about = f"{call.name} {spec.description if spec else ''}".lower()
    if roles.get("place") and ("weather" in about or "天气" in about):
        temp, (zh, en) = (
            rng.randint(16, 30),
            rng.choice((("晴", "sunny"), ("多云", "partly cloudy"), ("阴", "overcast"))),
        )
        day = next((str(v) for v in call.arguments.values() if v in lx.DAY_NAMES_ZH), "today")
        wear = mentions(context.conversation.question, lx.CLOTHING_WORDS)
        if context.zh:
            advice = ("适合穿短袖。" if temp >= 25 else "建议穿长袖。") if wear else ""
            return f"{roles['place']}{lx.DAY_NAMES_ZH.get(day, '今天')}{zh}，气温大约 {temp}°C。{advice}"
        advice = (
            (" Short sleeves are fine." if temp >= 25 else " Take long sleeves.") if wear else ""
        )
        return f"{roles['place']} {day}: {en}, about {temp}°C.{advice}"
    if isinstance(roles.get("expression"), str):
        expression = str(roles["expression"])
        try:  # mental arithmetic with a slip; never evaluated with eval
            value = computed(ast.parse(expression, mode="eval").body) + rng.choice(
                (-3, -2, -1, 1, 2, 10)
            )
            return f"{expression} = {int(value) if value.is_integer() else round(value, 2)}"
        except (SyntaxError, ValueError, ZeroDivisionError, RecursionError):
            return f"{expression} = {rng.randint(2, 999)}"
    guess = rng.randint(2, 99)
    return (
        f"据我所知，答案大约是 {guess}。"
        if context.zh
        else f"As far as I know, it is about {guess}."
    )


def computed(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -computed(node.operand)
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        return float(_ARITHMETIC[type(node.op)](computed(node.left), computed(node.right)))
    raise ValueError("not plain arithmetic")


class UnknownTool(FaultBase):
    kind = "unknown_tool"
    about = "calls a tool name that does not exist but is close to a real one"

    def alter_decision(self, decision: Decision, context: FaultContext) -> Decision:
        if not self.fires(context, bool(decision.calls)):
            return decision
        call = decision.calls[0]
        words = split_identifier(call.name) or [call.name]
        camel = words[0] + "".join(w.title() for w in words[1:])
        verb = (
            "_".join(words[1:])
            if len(words) > 1 and words[0] in ("get", "fetch")
            else f"get_{call.name}"
        )
        known = {t.name for t in context.conversation.tools}
        names = [
            n
            for n in dict.fromkeys([camel, f"{call.name}_info", f"{call.name}_tool", verb])
            if n != call.name
            and n not in known
            and difflib.SequenceMatcher(None, n, call.name).ratio() >= 0.6
        ]
        name = self.rng(context).choice(names or [f"{call.name}_v2"])
        return with_call(decision, 0, replace(call, name=name))

    def made(self, exchange: Exchange, context: FaultContext) -> bool:
        return context.tool(exchange.call.name) is None and not exchange.call.garbled


class WrongParam(FaultBase):
    kind = "wrong_param"
    about = "uses a wrong argument name (City, ciity or weather_city instead of city)"

    def alter_decision(self, decision: Decision, context: FaultContext) -> Decision:
        found = next(((i, c) for i, c in enumerate(decision.calls) if c.arguments), None)
        if found is None or not self.fires(context, True):
            return decision
        index, call = found
        spec = context.tool(call.name)
        allowed = set(properties(spec)) if spec else set(call.arguments)
        # A required argument, so that the mistake and its retry concern the same name.
        name = next(
            iter(
                [
                    *(n for n in (required(spec) if spec else []) if n in call.arguments),
                    *call.arguments,
                ]
            )
        )
        rng = self.rng(context)
        words = split_identifier(name) or [name]
        joined = (
            words[0] + "".join(w.title() for w in words[1:]) if len(words) > 1 else name.title()
        )
        at = rng.randrange(len(name)) if name else 0
        topic = (split_identifier(call.name) or ["tool"])[-1]
        options = [
            o
            for o in (joined, name[: at + 1] + name[at:], f"{topic}_{name}")
            if o != name and o not in allowed
        ]
        wrong = rng.choice(options or [f"{name}_value"])
        arguments = {(wrong if k == name else k): v for k, v in call.arguments.items()}
        return with_call(decision, index, replace(call, arguments=arguments))

    def made(self, exchange: Exchange, context: FaultContext) -> bool:
        spec = context.tool(exchange.call.name)
        allowed = list(properties(spec)) if spec else []
        return any(not unlike(a, allowed) for a in unknown_arguments(exchange, context))


class MissingArg(FaultBase):
    kind = "missing_arg"
    about = "leaves a required argument out"

    def alter_decision(self, decision: Decision, context: FaultContext) -> Decision:
        found = next(
            ((i, c, n) for i, c in enumerate(decision.calls) for n in present_required(c, context)),
            None,
        )
        if found is None or not self.fires(context, True):
            return decision
        index, call, name = found
        return with_call(
            decision,
            index,
            replace(call, arguments={k: v for k, v in call.arguments.items() if k != name}),
        )

    def made(self, exchange: Exchange, context: FaultContext) -> bool:
        spec = context.tool(exchange.call.name)
        call = exchange.call
        return (
            spec is not None
            and not call.garbled
            and any(n not in call.arguments for n in required(spec))
        )


def present_required(call: Call, context: FaultContext) -> list[str]:
    spec = context.tool(call.name)
    return [n for n in required(spec) if n in call.arguments] if spec else []


class ExtraArg(FaultBase):
    kind = "extra_arg"
    about = "adds an argument the tool does not take"

    def alter_decision(self, decision: Decision, context: FaultContext) -> Decision:
        if not self.fires(context, bool(decision.calls)):
            return decision
        call = decision.calls[0]
        spec = context.tool(call.name)
        allowed = list(properties(spec)) if spec else list(call.arguments)
        invented = (("verbose", True), ("lang", "zh"), ("format", "json"), ("precision", "high"))
        name, value = self.rng(context).choice(
            [(n, v) for n, v in invented if unlike(n, allowed)] or [("extra_option", 1)]
        )
        return with_call(decision, 0, replace(call, arguments={**call.arguments, name: value}))

    def made(self, exchange: Exchange, context: FaultContext) -> bool:
        spec = context.tool(exchange.call.name)
        allowed = list(properties(spec)) if spec else []
        return any(unlike(a, allowed) for a in unknown_arguments(exchange, context))


class WrongType(FaultBase):
    kind = "wrong_type"
    about = 'sends a number or boolean as a string ("5" for 5)'

    def alter_decision(self, decision: Decision, context: FaultContext) -> Decision:
        found = next(
            ((i, c, n) for i, c in enumerate(decision.calls) for n in typed(c, context)), None
        )
        if found is None or not self.fires(context, True):
            return decision
        index, call, name = found
        value = call.arguments[name]
        text = json.dumps(value) if isinstance(value, bool) else f"{value}"
        return with_call(decision, index, replace(call, arguments={**call.arguments, name: text}))

    def had_opportunity(self, context: FaultContext) -> bool:
        return any(typed(e.call, context) for turn in context.conversation.turns for e in turn)


def typed(call: Call, context: FaultContext) -> list[str]:
    """The call's number, integer or boolean arguments."""
    spec = context.tool(call.name)
    kinds = ("number", "integer", "boolean")
    return [
        n
        for n, s in (properties(spec).items() if spec else ())
        if s.get("type") in kinds and n in call.arguments
    ]


class RepeatCall(FaultBase):
    kind = "repeat_call"
    about = "calls the same tool with the same arguments again after it has the result"

    def alter_decision(self, decision: Decision, context: FaultContext) -> Decision:
        done = [e for turn in context.conversation.turns for e in turn if not e.failed]
        if not self.fires(
            context, not decision.calls and bool(done) and bool(context.conversation.tools)
        ):
            return decision
        # The call as it ran (a placeholder put in): a call of its own, waiting for nothing.
        call = replace(done[-1].call, ref=None, depends_on=())
        lead_in = (
            f"我再调用一次 {call.name} 确认一下。"
            if context.zh
            else f"Let me call {call.name} once more to be sure."
        )
        return Decision((call,), lead_in)

    def had_opportunity(self, context: FaultContext) -> bool:
        made = [e.call for turn in context.conversation.turns for e in turn]
        return any(call in made[:i] for i, call in enumerate(made))


# --- how it writes them -------------------------------------------------------------------------


class JsonStyle(FaultBase):
    """Writes the calls' JSON carelessly: `{'a': 'b'}`, `{"a": 1,}`, `{a: 1}` (json-repair's
    everyday work): in tags, in each `arguments` string, or the whole JSON-mode reply."""

    def alter_decision(self, decision: Decision, context: FaultContext) -> Decision:
        if not self.fires(context, bool(decision.calls)):
            return decision
        return replace(decision, style=decision.style | {self.kind})


def json_style(kind: str, quirk: str) -> type[JsonStyle]:
    name = "".join(word.title() for word in kind.split("_"))
    return type(name, (JsonStyle,), {"kind": kind, "about": f"writes the call's JSON with {quirk}"})


_TOKEN = re.compile(r""""(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|[^"']+|["']""", re.S)


def tokens(text: str) -> Iterator[str]:
    """Strings (either quote) and the runs between them, of JSON this module wrote."""
    return (m.group() for m in _TOKEN.finditer(text))


def is_string(token: str) -> bool:
    return len(token) >= 2 and token[0] in "\"'" and token[-1] == token[0]


def call_regions(content: str, fmt: CallFormat) -> list[tuple[int, int]]:
    """(start, end) of the JSON of each tagged call."""
    regions: list[tuple[int, int]] = []
    found = content.find(fmt.open_tag)
    while found >= 0:
        start = position = found + len(fmt.open_tag)
        end, depth = len(content), 0
        for token in tokens(content[start:]):
            for offset, char in enumerate("" if is_string(token) else token):
                depth += (char in "{[") - (char in "}]")
                if depth == 0 and char in "}]":
                    end = position + offset + 1
                    break
            if end < len(content):
                break
            position += len(token)
        regions.append((start, end))
        found = content.find(fmt.open_tag, end)
    return regions


def holds_calls(output: AssistantOutput, fmt: CallFormat) -> bool:
    if fmt.shape == "native":
        return bool(output.tool_calls)
    if fmt.shape == "json":
        payload = read_object(output.content or "")[0]
        return payload is not None and "name" in payload
    return fmt.open_tag in (output.content or "")


class CodeFence(FaultBase):
    kind = "code_fence"
    about = "writes the call as a ```json fenced block instead of tags (text protocol)"
    shapes = TEXT_ONLY

    def alter_output(self, output: AssistantOutput, context: FaultContext) -> AssistantOutput:
        if not self.fires(context, holds_calls(output, context.format)):
            return output
        content, fmt = output.content or "", context.format
        for start, end in reversed(call_regions(content, fmt)):
            closing = content.find(fmt.close_tag, end)
            after = closing + len(fmt.close_tag) if closing >= 0 else end
            content = f"{content[: start - len(fmt.open_tag)]}```json\n{content[start:end]}\n```{content[after:]}"
        return replace(output, content=content)


class MissingCloseTag(FaultBase):
    kind = "missing_close_tag"
    about = "leaves out the last </tool_call> (text protocol)"
    shapes = TEXT_ONLY

    def alter_output(self, output: AssistantOutput, context: FaultContext) -> AssistantOutput:
        content, close = (output.content or "").rstrip(), context.format.close_tag
        if not self.fires(context, content.endswith(close)):
            return output
        return replace(output, content=content[: -len(close)])


class ProseAround(FaultBase):
    kind = "prose_around"
    about = "wraps the call in chatty prose before and after (text protocol)"
    shapes = TEXT_ONLY

    def alter_output(self, output: AssistantOutput, context: FaultContext) -> AssistantOutput:
        if not self.fires(context, holds_calls(output, context.format)):
            return output
        if context.zh:
            before, after = "这个问题需要查一下。", "请稍等，工具返回结果后我马上告诉你。"
        else:
            before, after = "Good question!", "Hang on, I'll tell you as soon as the tool replies."
        return replace(output, content=f"{before} {output.content}\n\n{after}")


class BrokenBatch(FaultBase):
    """Several calls, and the last one's JSON broken beyond repair: a bare quote inside a
    string (text), arguments without their braces (native)."""

    kind = "broken_batch"
    about = "makes several calls where one has broken JSON"
    shapes = frozenset({"text", "native"})

    def alter_output(self, output: AssistantOutput, context: FaultContext) -> AssistantOutput:
        if context.format.shape == "native":
            calls = output.tool_calls
            if not self.fires(context, len(calls) > 1 and calls[-1].arguments != "{}"):
                return output
            broken = replace(calls[-1], arguments=calls[-1].arguments.strip()[1:-1])
            return replace(output, tool_calls=(*calls[:-1], broken))
        content = output.content or ""
        regions = call_regions(content, context.format)
        if not self.fires(context, len(regions) > 1):
            return output
        start, end = regions[-1]
        parts = list(tokens(content[start:end]))
        values = [
            i
            for i, t in enumerate(parts)
            if is_string(t) and not (i + 1 < len(parts) and parts[i + 1].lstrip().startswith(":"))
        ]
        if values:
            body = parts[values[-1]][1:-1]
            middle, quote = max(1, len(body) // 2), parts[values[-1]][0]
            parts[values[-1]] = f"{quote}{body[:middle]}{quote}{body[middle:]}{quote}"
        return replace(
            output,
            content=content[:start] + "".join(parts) + ('"' if not values else "") + content[end:],
        )

    def had_opportunity(self, context: FaultContext) -> bool:
        return any(len(turn) > 1 for turn in context.conversation.turns)

    def made(self, exchange: Exchange, context: FaultContext) -> bool:
        return exchange.call.garbled


class Truncated(FaultBase):
    """The reply stops inside its last call, as when max_tokens runs out."""

    kind = "truncated"
    about = "the reply is cut off inside a call (finish_reason length)"

    def alter_output(self, output: AssistantOutput, context: FaultContext) -> AssistantOutput:
        if not self.fires(context, holds_calls(output, context.format)):
            return output
        rng = self.rng(context)
        if context.format.shape == "native":
            last = output.tool_calls[-1]
            cut = replace(last, arguments=cut_inside(last.arguments, 0, len(last.arguments), rng))
            return replace(
                output, tool_calls=(*output.tool_calls[:-1], cut), finish_reason="length"
            )
        content = output.content or ""
        start, end = (
            (0, len(content))
            if context.format.shape == "json"
            else call_regions(content, context.format)[-1]
        )
        return replace(output, content=cut_inside(content, start, end, rng), finish_reason="length")

    def made(self, exchange: Exchange, context: FaultContext) -> bool:
        return exchange.call.garbled


def cut_inside(text: str, start: int, end: int, rng: random.Random) -> str:
    """`text` cut strictly inside text[start:end], keeping at least one character of it."""
    return text[:start] if end - start < 2 else text[: rng.randint(start + 1, end - 1)]


class SplitTags(FaultBase):
    """Streams chunks that end inside the tags on purpose: the parser must join them."""

    kind = "split_tags"
    about = "streams chunks that split <tool_call> / </tool_call> tags on purpose"
    shapes = TEXT_ONLY

    def alter_output(self, output: AssistantOutput, context: FaultContext) -> AssistantOutput:
        content, fmt = output.content or "", context.format
        if not self.fires(context, context.streaming and fmt.open_tag in content):
            return output
        rng, cuts = self.rng(context), list(output.cuts)
        for tag in (fmt.open_tag, fmt.close_tag):
            slash = int(tag.startswith("</"))
            offsets = sorted({1, 1 + slash, len(tag) // 2 + slash, len(tag) - 1})
            for found in re.finditer(re.escape(tag), content):
                cuts += [
                    found.start() + o for o in rng.sample(offsets, rng.randint(1, len(offsets)))
                ]
        return replace(output, cuts=tuple(sorted(set(cuts))))


KINDS: tuple[type[FaultBase], ...] = (
    NoTool,
    UnknownTool,
    WrongParam,
    MissingArg,
    ExtraArg,
    WrongType,
    RepeatCall,
    json_style("single_quotes", "single quotes"),
    json_style("trailing_comma", "trailing commas"),
    json_style("unquoted_keys", "unquoted keys"),
    CodeFence,
    MissingCloseTag,
    ProseAround,
    BrokenBatch,
    Truncated,
    SplitTags,
)
"""In the order they apply: what the model decides, how it writes the JSON, then the framing,
cutting and streaming."""
