"""Faults for the offline model: on request it misbehaves the way real models do, so that each of
the engine's recovery paths can be seen (`--faults single_quotes,wrong_param --fault-rate 0.5`).

Which (fault, wire shape) pairs apply: "text" is the tag protocol (regex, stream tags), "native"
is `tool_calls` (schema tools, stream native), "json" is JSON mode (schema json). Not applied:
- prose_around, code_fence, missing_close_tag: text only. In native mode prose next to
  `tool_calls` is normal, and in JSON mode the server's grammar allows nothing around the object.
- split_tags: text shape, streamed requests only (there are no tags in the other shapes, and a
  non-streamed reply is one piece).
- broken_batch: text and native only; JSON mode carries one call per reply.
- every other kind applies to all three shapes.

How often: a fault fires with probability `rate` on its first opportunity in a conversation (for
most kinds the first reply that makes calls). When the engine reports the mistake back (an error
result that says how to fix it), the model corrects itself with probability 0.8; otherwise it
makes the same mistake once more, never a third time. A mistake the engine fixes silently
(json-repair, argument coercion) is made once. All draws come from the request's digest, so a
seed and a request always give the same reply.
"""

from __future__ import annotations

import ast
import difflib
import json
import operator
import random
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any, ClassVar

from toolcall_cli.messages import ToolSpec
from toolcall_cli.models.completions import AssistantOutput
from toolcall_cli.offline import _lexicon as lx
from toolcall_cli.offline._brain import (
    Decision,
    Exchange,
    PlannedCall,
    mentions,
    param_role,
    properties,
    required,
)
from toolcall_cli.offline._model import (
    Fault,
    FaultContext,
    Shape,
    decode_object,
)
from toolcall_cli.strategies.prompt import CALL_CLOSE, CALL_OPEN
from toolcall_cli.tools.coerce import SYNONYMS

FAULT_KINDS: dict[str, str] = {
    "no_tool": "硬答: answers from 'memory' without calling the tool it needs (undetectable)",
    "unknown_tool": "calls a tool name that does not exist but is close to a real one",
    "wrong_param": "uses a wrong argument name (location instead of city)",
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
"""Kind name (as `--faults` takes it) → one line. The order is the order faults are applied:
what the model decides, then how the JSON is written, then framing, cutting and streaming."""

CORRECTS_AFTER_ERROR = 0.8
"""The chance that the model fixes a mistake the engine reported; else it makes it once more."""

ALL_SHAPES: frozenset[Shape] = frozenset({"text", "native", "json"})
TEXT_ONLY: frozenset[Shape] = frozenset({"text"})


class UnknownFault(ValueError):
    """A fault name that is not one of FAULT_KINDS."""


def make_faults(names: Sequence[str], rate: float = 1.0) -> list[Fault]:
    """The faults called `names` (a name may also be a comma-separated list), in the order they
    apply. `rate` is the chance that each fires on a turn where it can."""
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"fault rate must be between 0 and 1, got {rate:g}")
    wanted = [n.strip() for name in names for n in name.split(",") if n.strip()]
    unknown = [n for n in wanted if n not in FAULT_KINDS]
    if unknown:
        raise UnknownFault(
            f"unknown fault {', '.join(map(repr, unknown))}; choose from {', '.join(FAULT_KINDS)}"
        )
    return [_FAULTS[kind](rate) for kind in FAULT_KINDS if kind in wanted]


# --- when a fault fires ------------------------------------------------------------------------


class FaultBase:
    """Decides when a fault fires; subclasses say how it applies and what the engine says back."""

    kind: ClassVar[str]
    shapes: ClassVar[frozenset[Shape]] = ALL_SHAPES
    reported_as: ClassVar[re.Pattern[str] | None] = None
    """How the engine's error about this mistake reads; None when the engine fixes it silently."""

    def __init__(self, rate: float = 1.0) -> None:
        self.rate = rate

    def __repr__(self) -> str:
        return f"{type(self).__name__}(rate={self.rate:g})"

    def alter_decision(self, decision: Decision, context: FaultContext) -> Decision:
        return decision

    def alter_output(self, output: AssistantOutput, context: FaultContext) -> AssistantOutput:
        return output

    def rng(self, context: FaultContext) -> random.Random:
        """This fault's own draws for this request, independent of the other faults."""
        return random.Random(f"{context.key}:{self.kind}")

    def fires(self, context: FaultContext, applicable: bool) -> bool:
        if not applicable or self.rate <= 0 or context.shape not in self.shapes:
            return False
        chance = random.Random(f"{context.key}:{self.kind}:fires").random()
        if self.repeating(context):
            return chance >= CORRECTS_AFTER_ERROR
        return not self.had_opportunity(context) and chance < self.rate

    def had_opportunity(self, context: FaultContext) -> bool:
        """Whether an earlier reply could already have carried this fault: it fires fresh only
        on its first opportunity. Most faults apply to the first reply that makes calls."""
        return context.turn > 0

    def repeating(self, context: FaultContext) -> bool:
        """The engine reported this mistake on the last turn, and not on the turn before (so a
        mistake is made at most twice in a row)."""
        turns = context.conversation.turns
        return (
            bool(turns)
            and self.reported(turns[-1])
            and not (len(turns) > 1 and self.reported(turns[-2]))
        )

    def reported(self, turn: Sequence[Exchange]) -> bool:
        pattern = self.reported_as
        return pattern is not None and any(pattern.search(e.result or "") for e in turn)


def tool_spec(context: FaultContext, name: str) -> ToolSpec | None:
    return next((t for t in context.conversation.tools if t.name == name), None)


def asks_in_chinese(context: FaultContext) -> bool:
    return lx.has_cjk(context.conversation.question)


def with_call(decision: Decision, index: int, call: PlannedCall) -> Decision:
    calls = list(decision.calls)
    calls[index] = call
    return Decision(tuple(calls), decision.text)


# --- what the model decides --------------------------------------------------------------------


class NoTool(FaultBase):
    """硬答: the first reply answers from "memory" instead of making the calls it needs, with a
    plausible invented answer. Shapes: all. The engine cannot tell: the run ends with a
    FinalAnswer that no tool call backs."""

    kind = "no_tool"

    def alter_decision(self, decision: Decision, context: FaultContext) -> Decision:
        if not self.fires(context, bool(decision.calls)):
            return decision
        rng = self.rng(context)
        lines = [invented_line(call, context, rng) for call in decision.calls]
        return Decision(text="\n".join(dict.fromkeys(lines)))


_CONDITIONS = (("晴", "sunny"), ("多云", "partly cloudy"), ("阴", "overcast"))


def invented_line(call: PlannedCall, context: FaultContext, rng: random.Random) -> str:
    """One confident sentence about what the call would have found, made up."""
    zh = asks_in_chinese(context)
    spec = tool_spec(context, call.name)
    roles = {
        param_role(n, s): call.arguments.get(n)
        for n, s in (properties(spec).items() if spec else ())
    }
    about = f"{call.name} {spec.description if spec else ''}".lower()
    if roles.get("place") and ("weather" in about or "天气" in about):
        return invented_weather(str(roles["place"]), call, context, rng)
    if isinstance(roles.get("expression"), str):
        return f"{roles['expression']} = {invented_number(str(roles['expression']), rng)}"
    guess = rng.randint(2, 99)
    return f"据我所知，答案大约是 {guess}。" if zh else f"As far as I know, it is about {guess}."


def invented_weather(
    place: str, call: PlannedCall, context: FaultContext, rng: random.Random
) -> str:
    zh = asks_in_chinese(context)
    temp = rng.randint(16, 30)
    condition_zh, condition_en = rng.choice(_CONDITIONS)
    day = str(call.arguments.get("day", "today"))
    wear = mentions(context.conversation.question, lx.CLOTHING_WORDS)
    if zh:
        advice = ("适合穿短袖。" if temp >= 25 else "建议穿长袖。") if wear else ""
        return (
            f"{place}{lx.DAY_NAMES_ZH.get(day, '今天')}{condition_zh}，气温大约 {temp}°C。{advice}"
        )
    advice = (" Short sleeves are fine." if temp >= 25 else " Take long sleeves.") if wear else ""
    return f"{place} {day}: {condition_en}, about {temp}°C.{advice}"


_ARITHMETIC: dict[type[ast.AST], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


def invented_number(expression: str, rng: random.Random) -> int | float:
    """Mental arithmetic gone slightly wrong: the value plus a slip (never evaluated with eval)."""
    try:
        value = arithmetic(ast.parse(expression, mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError, RecursionError):
        return rng.randint(2, 999)
    slipped = value + rng.choice((-3, -2, -1, 1, 2, 10))
    return int(slipped) if float(slipped).is_integer() else round(slipped, 2)


def arithmetic(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -arithmetic(node.operand)
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        return float(_ARITHMETIC[type(node.op)](arithmetic(node.left), arithmetic(node.right)))
    raise ValueError("not plain arithmetic")


class UnknownTool(FaultBase):
    """Calls a tool that does not exist, named close to the real one (`getWeather`,
    `get_weather_info`). Shapes: all. The engine answers "unknown tool ... Did you mean"."""

    kind = "unknown_tool"
    reported_as = re.compile(r"unknown tool", re.I)

    def alter_decision(self, decision: Decision, context: FaultContext) -> Decision:
        if not self.fires(context, bool(decision.calls)):
            return decision
        rng = self.rng(context)
        call = decision.calls[0]
        known = {t.name for t in context.conversation.tools}
        name = rng.choice(hallucinated_names(call.name, known))
        return with_call(decision, 0, PlannedCall(name, call.arguments, call.key))


def hallucinated_names(name: str, known: set[str]) -> list[str]:
    """Names a model invents for a tool: another casing, a suffix, a dropped or added verb."""
    words = [w for w in re.split(r"[_\W]+|(?<=[a-z])(?=[A-Z])", name) if w]
    camel = words[0].lower() + "".join(w.title() for w in words[1:]) if words else name
    bare = "_".join(words[1:]) if len(words) > 1 and words[0] in ("get", "fetch") else ""
    verb = "" if bare else f"get_{name}"
    candidates = [camel, f"{name}_info", f"{name}_tool", bare, verb]
    close = [
        c
        for c in dict.fromkeys(candidates)
        if c and c != name and c not in known
        if difflib.SequenceMatcher(None, c, name).ratio() >= 0.6
    ]
    return close or [f"{name}_v2"]


class WrongParam(FaultBase):
    """Names an argument wrongly: a synonym (`location` for `city`, `expr` for `expression`).
    Shapes: all. The engine answers "unexpected argument ... did you mean `city`? Rename it"."""

    kind = "wrong_param"
    reported_as = re.compile(r"unexpected argument .*did you mean", re.I)

    def alter_decision(self, decision: Decision, context: FaultContext) -> Decision:
        found = next(((i, c) for i, c in enumerate(decision.calls) if c.arguments), None)
        if found is None or not self.fires(context, True):
            return decision
        index, call = found
        spec = tool_spec(context, call.name)
        allowed = set(properties(spec)) if spec else set(call.arguments)
        # A required argument, so that the mistake and its retry concern the same name.
        name = next(iter([*required_present(call, context), *call.arguments]))
        wrong = misnamed(name, allowed, self.rng(context))
        arguments = {(wrong if k == name else k): v for k, v in call.arguments.items()}
        return with_call(decision, index, PlannedCall(call.name, arguments, call.key))


def misnamed(name: str, allowed: set[str], rng: random.Random) -> str:
    group = next((g for g in SYNONYMS if name.casefold() in g), frozenset())
    options = sorted(w for w in group if w != name and w not in allowed)
    return rng.choice(options) if options else f"{name}_name"


class MissingArg(FaultBase):
    """Leaves a required argument out. Shapes: all. The engine answers "missing required
    argument `city`: add it"."""

    kind = "missing_arg"
    reported_as = re.compile(r"missing required argument", re.I)

    def alter_decision(self, decision: Decision, context: FaultContext) -> Decision:
        found = next(
            (
                (i, c, name)
                for i, c in enumerate(decision.calls)
                for name in required_present(c, context)
            ),
            None,
        )
        if found is None or not self.fires(context, True):
            return decision
        index, call, name = found
        arguments = {k: v for k, v in call.arguments.items() if k != name}
        return with_call(decision, index, PlannedCall(call.name, arguments, call.key))


def required_present(call: PlannedCall, context: FaultContext) -> list[str]:
    spec = tool_spec(context, call.name)
    return [n for n in required(spec) if n in call.arguments] if spec else []


_INVENTED_ARGUMENTS: tuple[tuple[str, Any], ...] = (
    ("verbose", True),
    ("lang", "zh"),
    ("format", "json"),
    ("precision", "high"),
)


class ExtraArg(FaultBase):
    """Adds an argument the tool does not take (`verbose: true`). Shapes: all. The engine
    answers "unexpected argument `verbose`: remove it"."""

    kind = "extra_arg"
    reported_as = re.compile(r"unexpected argument .*remove it", re.I)

    def alter_decision(self, decision: Decision, context: FaultContext) -> Decision:
        if not self.fires(context, bool(decision.calls)):
            return decision
        call = decision.calls[0]
        spec = tool_spec(context, call.name)
        allowed = list(properties(spec)) if spec else list(call.arguments)
        options = [(n, v) for n, v in _INVENTED_ARGUMENTS if unlike(n, allowed)]
        name, value = self.rng(context).choice(options or [("extra_option", 1)])
        arguments = {**call.arguments, name: value}
        return with_call(decision, 0, PlannedCall(call.name, arguments, call.key))


def unlike(name: str, allowed: Sequence[str]) -> bool:
    """Not a name the engine would take for a misspelt or synonymous real parameter."""
    close = difflib.get_close_matches(name, list(allowed), n=1, cutoff=0.5)
    return not close and not any(name in g and set(allowed) & g for g in SYNONYMS)


_NUMERIC_TYPES = frozenset({"number", "integer", "boolean"})


class WrongType(FaultBase):
    """Sends a number or boolean as a string ("25" for 25, "true" for true). Shapes: all; only
    for calls with a number, integer or boolean argument. The executor coerces it silently
    (the result lists the coercion)."""

    kind = "wrong_type"

    def alter_decision(self, decision: Decision, context: FaultContext) -> Decision:
        found = next(
            (
                (i, c, name)
                for i, c in enumerate(decision.calls)
                for name in typed_arguments(c, context)
            ),
            None,
        )
        if found is None or not self.fires(context, True):
            return decision
        index, call, name = found
        value = call.arguments[name]
        text = json.dumps(value) if isinstance(value, bool) else f"{value}"
        arguments = {**call.arguments, name: text}
        return with_call(decision, index, PlannedCall(call.name, arguments, call.key))

    def had_opportunity(self, context: FaultContext) -> bool:
        earlier = [e.call for turn in context.conversation.turns for e in turn]
        return any(typed_arguments(call, context) for call in earlier)


def typed_arguments(call: PlannedCall, context: FaultContext) -> list[str]:
    spec = tool_spec(context, call.name)
    return [
        name
        for name, schema in (properties(spec).items() if spec else ())
        if schema.get("type") in _NUMERIC_TYPES and name in call.arguments
    ]


_REPEATED_NOTE = "You already called"


class RepeatCall(FaultBase):
    """Has the result, yet calls the same tool with the same arguments again instead of
    answering: the start of a loop. Shapes: all. The engine answers from the earlier result with
    a note (a cached result), and the model then answers."""

    kind = "repeat_call"

    def alter_decision(self, decision: Decision, context: FaultContext) -> Decision:
        conversation = context.conversation
        done = [e for turn in conversation.turns for e in turn if not e.failed]
        applicable = decision.is_answer and bool(done) and bool(conversation.tools)
        if not self.fires(context, applicable):
            return decision
        call = done[-1].call
        if asks_in_chinese(context):
            lead_in = f"我再调用一次 {call.name} 确认一下。"
        else:
            lead_in = f"Let me call {call.name} once more to be sure."
        return Decision((call,), lead_in)

    def had_opportunity(self, context: FaultContext) -> bool:
        turns = context.conversation.turns
        return any(_REPEATED_NOTE in (e.result or "") for turn in turns for e in turn)


# --- how the JSON is written -------------------------------------------------------------------

_TOKEN_RE = re.compile(r""""(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|[^"']+|["']""", re.S)
_IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def tokens(text: str) -> Iterator[str]:
    """Strings (either quote) and the runs between them, for JSON this module wrote."""
    return (m.group() for m in _TOKEN_RE.finditer(text))


def is_string(token: str) -> bool:
    return len(token) >= 2 and token[0] in "\"'" and token[-1] == token[0]


def string_value(token: str) -> str:
    try:
        value = json.loads('"' + token[1:-1].replace("\\'", "'") + '"')
    except ValueError:
        return token[1:-1]
    return value if isinstance(value, str) else token[1:-1]


def single_quoted(text: str) -> str:
    """`{"a": "it's"}` → `{'a': 'it\\'s'}`, the way a model used to Python writes it."""
    out = []
    for token in tokens(text):
        if is_string(token) and token[0] == '"':
            body = token[1:-1].replace('\\"', '"').replace("'", "\\'")
            token = f"'{body}'"
        out.append(token)
    return "".join(out)


def unquoted_keys(text: str) -> str:
    """`{"city": "北京"}` → `{city: "北京"}` for keys that are plain identifiers."""
    parts = list(tokens(text))
    for i, token in enumerate(parts):
        following = parts[i + 1].lstrip() if i + 1 < len(parts) else ""
        key = string_value(token) if is_string(token) else ""
        if following.startswith(":") and _IDENTIFIER_RE.fullmatch(key):
            parts[i] = key
    return "".join(parts)


def trailing_commas(text: str) -> str:
    """A comma after the last member of every non-empty object and array."""
    out: list[str] = []
    last = ""
    for token in tokens(text):
        if is_string(token):
            out.append(token)
            last = token[-1]
            continue
        for char in token:
            if char in "}]" and last not in "{[,":
                out.append(",")
            out.append(char)
            last = char if not char.isspace() else last
    return "".join(out)


def json_end(text: str, start: int) -> int:
    """Where the JSON value starting at `start` ends (or the end of the text)."""
    depth = 0
    position = start
    for token in tokens(text[start:]):
        if not is_string(token):
            for offset, char in enumerate(token):
                depth += char in "{["
                depth -= char in "}]"
                if depth == 0 and char in "}]":
                    return position + offset + 1
        position += len(token)
    return len(text)


def call_regions(content: str) -> list[tuple[int, int]]:
    """(start, end) of the JSON of each tagged call in text-protocol content."""
    regions: list[tuple[int, int]] = []
    found = content.find(CALL_OPEN)
    while found >= 0:
        start = found + len(CALL_OPEN)
        end = json_end(content, start)
        regions.append((start, end))
        found = content.find(CALL_OPEN, end)
    return regions


def is_call_output(output: AssistantOutput, shape: Shape) -> bool:
    if shape == "native":
        return bool(output.tool_calls)
    content = output.content or ""
    if shape == "json":
        payload = decode_object(content)
        return payload is not None and "name" in payload
    return CALL_OPEN in content


class JsonStyleFault(FaultBase):
    """Rewrites the call JSON: in tags (text), in each `arguments` string (native), or the whole
    reply (json). json-repair restores it; the parsed call is marked repaired."""

    def rewrite(self, text: str) -> str:
        raise NotImplementedError

    def alter_output(self, output: AssistantOutput, context: FaultContext) -> AssistantOutput:
        if not self.fires(context, is_call_output(output, context.shape)):
            return output
        rewrite = self.rewrite
        if context.shape == "native":
            calls = tuple(replace(c, arguments=rewrite(c.arguments)) for c in output.tool_calls)
            return replace(output, tool_calls=calls)
        content = output.content or ""
        if context.shape == "json":
            return replace(output, content=rewrite(content))
        for start, end in reversed(call_regions(content)):
            content = content[:start] + rewrite(content[start:end]) + content[end:]
        return replace(output, content=content)


class SingleQuotes(JsonStyleFault):
    """`{'name': 'get_weather', ...}`. Shapes: all (see JsonStyleFault)."""

    kind = "single_quotes"

    def rewrite(self, text: str) -> str:
        return single_quoted(text)


class TrailingComma(JsonStyleFault):
    """`{"city": "北京",}`. Shapes: all (see JsonStyleFault)."""

    kind = "trailing_comma"

    def rewrite(self, text: str) -> str:
        return trailing_commas(text)


class UnquotedKeys(JsonStyleFault):
    """`{name: "get_weather", arguments: {city: "北京"}}`. Shapes: all (see JsonStyleFault)."""

    kind = "unquoted_keys"

    def rewrite(self, text: str) -> str:
        return unquoted_keys(text)


# --- framing -----------------------------------------------------------------------------------


class CodeFence(FaultBase):
    """Writes each call as a ```json fenced block with no tags, as chat-tuned models do.
    Shapes: text only. The parser takes a fenced call object as a call."""

    kind = "code_fence"
    shapes = TEXT_ONLY

    def alter_output(self, output: AssistantOutput, context: FaultContext) -> AssistantOutput:
        if not self.fires(context, is_call_output(output, context.shape)):
            return output
        content = output.content or ""
        for start, end in reversed(call_regions(content)):
            closing = content.find(CALL_CLOSE, end)
            after = closing + len(CALL_CLOSE) if closing >= 0 else end
            fenced = f"```json\n{content[start:end]}\n```"
            content = content[: start - len(CALL_OPEN)] + fenced + content[after:]
        return replace(output, content=content)


class MissingCloseTag(FaultBase):
    """Leaves out the closing tag of the last call. Shapes: text only. The parser accepts a
    complete call at the end of the reply without it."""

    kind = "missing_close_tag"
    shapes = TEXT_ONLY

    def alter_output(self, output: AssistantOutput, context: FaultContext) -> AssistantOutput:
        content = (output.content or "").rstrip()
        if not self.fires(context, content.endswith(CALL_CLOSE)):
            return output
        return replace(output, content=content[: -len(CALL_CLOSE)])


class ProseAround(FaultBase):
    """Chatty prose before and after the calls. Shapes: text only. The parser shows the prose as
    text and still finds the calls."""

    kind = "prose_around"
    shapes = TEXT_ONLY

    def alter_output(self, output: AssistantOutput, context: FaultContext) -> AssistantOutput:
        if not self.fires(context, is_call_output(output, context.shape)):
            return output
        if asks_in_chinese(context):
            before, after = "这个问题需要查一下。", "请稍等，工具返回结果后我马上告诉你。"
        else:
            before, after = "Good question!", "Hang on, I'll tell you as soon as the tool replies."
        return replace(output, content=f"{before} {output.content}\n\n{after}")


# --- broken and cut-off calls ------------------------------------------------------------------

_PARSE_ERROR_RE = re.compile(
    r"not valid JSON|never closed|ended inside a tool call|not a JSON object|"
    r"not the JSON object|matches neither a call",
    re.I,
)


class BrokenBatch(FaultBase):
    """Several calls in one reply, and the last one's JSON is broken beyond repair: an unescaped
    quote inside a string (text), or arguments without their braces (native). Shapes: text and
    native (JSON mode carries one call per reply). The other calls run; the broken one comes
    back as a parse error and is made again."""

    kind = "broken_batch"
    shapes = frozenset({"text", "native"})
    reported_as = _PARSE_ERROR_RE

    def alter_output(self, output: AssistantOutput, context: FaultContext) -> AssistantOutput:
        if context.shape == "native":
            last = output.tool_calls[-1] if output.tool_calls else None
            several = len(output.tool_calls) > 1 and last is not None and last.arguments != "{}"
            if last is None or not self.fires(context, several):
                return output
            broken = replace(last, arguments=last.arguments.strip()[1:-1])
            return replace(output, tool_calls=(*output.tool_calls[:-1], broken))
        content = output.content or ""
        regions = call_regions(content)
        if not self.fires(context, len(regions) > 1):
            return output
        start, end = regions[-1]
        return replace(
            output, content=content[:start] + unescaped_quote(content[start:end]) + content[end:]
        )

    def had_opportunity(self, context: FaultContext) -> bool:
        return any(len(turn) > 1 for turn in context.conversation.turns)


def unescaped_quote(call_json: str) -> str:
    """The last string value with a bare quote inside it: `"上"海"`."""
    parts = list(tokens(call_json))
    values = [
        i
        for i, token in enumerate(parts)
        if is_string(token) and not (i + 1 < len(parts) and parts[i + 1].lstrip().startswith(":"))
    ]
    if not values:
        return call_json + '"'
    i = values[-1]
    token = parts[i]
    quote, body = token[0], token[1:-1]
    middle = max(1, len(body) // 2)
    parts[i] = f"{quote}{body[:middle]}{quote}{body[middle:]}{quote}"
    return "".join(parts)


class Truncated(FaultBase):
    """The reply stops inside the last call, as when max_tokens runs out (finish_reason
    "length"). Shapes: all. Text: the parser reports a truncated call; native and json: what the
    parser makes of the cut JSON is its policy (see the tests)."""

    kind = "truncated"
    reported_as = re.compile(r"ended inside a tool call|not valid JSON|not the JSON object", re.I)

    def alter_output(self, output: AssistantOutput, context: FaultContext) -> AssistantOutput:
        if not self.fires(context, is_call_output(output, context.shape)):
            return output
        rng = self.rng(context)
        if context.shape == "native":
            last = output.tool_calls[-1]
            cut = replace(last, arguments=cut_inside(last.arguments, 0, len(last.arguments), rng))
            return replace(
                output, tool_calls=(*output.tool_calls[:-1], cut), finish_reason="length"
            )
        content = output.content or ""
        start, end = (0, len(content)) if context.shape == "json" else call_regions(content)[-1]
        return replace(output, content=cut_inside(content, start, end, rng), finish_reason="length")


def cut_inside(text: str, start: int, end: int, rng: random.Random) -> str:
    """`text` cut strictly inside text[start:end], keeping at least one character of it."""
    if end - start < 2:
        return text[:start]
    return text[: rng.randint(start + 1, end - 1)]


# --- streaming ---------------------------------------------------------------------------------

_TAG_CUTS = {CALL_OPEN: (1, 5, 10), CALL_CLOSE: (1, 2, 7, 11)}
"""Offsets inside each tag where a chunk may end: `<` | `tool_call>`, `</tool_` | `call>`."""


class SplitTags(FaultBase):
    """Streams chunks that end inside `<tool_call>` and `</tool_call>` on purpose. Shapes: text,
    streamed requests only. The streaming parser must put each tag back together."""

    kind = "split_tags"
    shapes = TEXT_ONLY

    def alter_output(self, output: AssistantOutput, context: FaultContext) -> AssistantOutput:
        content = output.content or ""
        if not self.fires(context, context.streaming and CALL_OPEN in content):
            return output
        rng = self.rng(context)
        cuts = list(output.cuts)
        for tag, offsets in _TAG_CUTS.items():
            for found in re.finditer(re.escape(tag), content):
                chosen = rng.sample(offsets, rng.randint(1, len(offsets)))
                cuts += [found.start() + offset for offset in chosen]
        return replace(output, cuts=tuple(sorted(set(cuts))))


_FAULTS: dict[str, Callable[[float], FaultBase]] = {
    cls.kind: cls
    for cls in (
        NoTool,
        UnknownTool,
        WrongParam,
        MissingArg,
        ExtraArg,
        WrongType,
        RepeatCall,
        SingleQuotes,
        TrailingComma,
        UnquotedKeys,
        CodeFence,
        MissingCloseTag,
        ProseAround,
        BrokenBatch,
        Truncated,
        SplitTags,
    )
}
