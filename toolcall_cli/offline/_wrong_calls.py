"""Faults in what the model decides: no call at all, a wrong tool or argument name, a missing,
invented or mistyped argument, a repeated call."""

from __future__ import annotations

import ast
import difflib
import json
import operator
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from toolcall_cli.offline import _lexicon as lx
from toolcall_cli.offline._model import (
    FaultBase,
    FaultContext,
    asks_in_chinese,
    tool_spec,
    with_call,
)
from toolcall_cli.offline._request import Decision, PlannedCall
from toolcall_cli.offline._words import mentions, param_role, properties, required, split_identifier


class NoTool(FaultBase):
    """硬答: the first reply answers from "memory" instead of making the calls it needs, with a
    plausible invented answer. Shapes: all. The engine cannot tell: the run ends with a
    FinalAnswer that no tool call backs."""

    kind = "no_tool"
    about = "硬答: answers from 'memory' without calling the tool it needs (undetectable)"

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
    day = next((str(v) for v in call.arguments.values() if v in lx.DAY_NAMES_ZH), "today")
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


def in_one_line(first: str, then: str) -> re.Pattern[str]:
    """`first`, then `then` later in the same line (either case): as `first.*then`, but tried
    from the first `first` of each line only (a lookahead, once matched, is not tried again).
    As `first.*then`, each `first` would read the rest of its line again."""
    return re.compile(rf"^(?=([^\n]*?{re.escape(first)}))\1[^\n]*{re.escape(then)}", re.I | re.M)


def invented_number(expression: str, rng: random.Random) -> int | float:
    """Mental arithmetic gone slightly wrong: the value plus a slip (never evaluated with eval)."""
    try:
        value = arithmetic(ast.parse(expression, mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError, RecursionError, OverflowError):
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
    about = "calls a tool name that does not exist but is close to a real one"
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
    words = split_identifier(name) or [name]
    camel = words[0] + "".join(w.title() for w in words[1:])
    verb = "_".join(words[1:]) if len(words) > 1 and words[0] in ("get", "fetch") else f"get_{name}"
    close = [
        c
        for c in dict.fromkeys([camel, f"{name}_info", f"{name}_tool", verb])
        if c != name and c not in known and difflib.SequenceMatcher(None, c, name).ratio() >= 0.6
    ]
    return close or [f"{name}_v2"]


class WrongParam(FaultBase):
    """Names an argument wrongly, as models do: `City`, `ciity` or `weather_city` for `city`.
    Shapes: all. The engine answers "unexpected argument ... did you mean `city`? Rename it"."""

    kind = "wrong_param"
    about = "uses a wrong argument name (City, ciity or weather_city instead of city)"
    reported_as = in_one_line("unexpected argument ", "did you mean")

    def alter_decision(self, decision: Decision, context: FaultContext) -> Decision:
        found = next(((i, c) for i, c in enumerate(decision.calls) if c.arguments), None)
        if found is None or not self.fires(context, True):
            return decision
        index, call = found
        spec = tool_spec(context, call.name)
        allowed = set(properties(spec)) if spec else set(call.arguments)
        # A required argument, so that the mistake and its retry concern the same name.
        name = next(iter([*required_present(call, context), *call.arguments]))
        wrong = misnamed(name, call.name, allowed, self.rng(context))
        arguments = {(wrong if k == name else k): v for k, v in call.arguments.items()}
        return with_call(decision, index, PlannedCall(call.name, arguments, call.key))


def misnamed(name: str, tool: str, allowed: set[str], rng: random.Random) -> str:
    """A wrong name for a parameter, as models write them, drawn from no table the engine knows:
    its words run together (`fromUnit`, `City`), a letter doubled (`ciity`), or the tool's topic
    in front (`weather_city`)."""
    words = split_identifier(name) or [name]
    joined = words[0] + "".join(w.title() for w in words[1:]) if len(words) > 1 else name.title()
    at = rng.randrange(len(name)) if name else 0
    topic = (split_identifier(tool) or ["tool"])[-1]
    options = [joined, name[: at + 1] + name[at:], f"{topic}_{name}"]
    return rng.choice([o for o in options if o != name and o not in allowed] or [f"{name}_value"])


class MissingArg(FaultBase):
    """Leaves a required argument out. Shapes: all. The engine answers "missing required
    argument `city`: add it"."""

    kind = "missing_arg"
    about = "leaves a required argument out"
    reported_as = re.compile(r"missing required argument", re.I)

    def alter_decision(self, decision: Decision, context: FaultContext) -> Decision:
        found = first_argument(decision, lambda call: required_present(call, context))
        if found is None or not self.fires(context, True):
            return decision
        index, call, name = found
        arguments = {k: v for k, v in call.arguments.items() if k != name}
        return with_call(decision, index, PlannedCall(call.name, arguments, call.key))


def first_argument(
    decision: Decision, names: Callable[[PlannedCall], list[str]]
) -> tuple[int, PlannedCall, str] | None:
    """The first call with an argument of the kind `names` lists, and that argument's name."""
    return next(((i, c, name) for i, c in enumerate(decision.calls) for name in names(c)), None)


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
    about = "adds an argument the tool does not take"
    reported_as = in_one_line("unexpected argument ", "remove it")

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
    """Not a name the engine could take for a misspelt or renamed real parameter."""
    close = difflib.get_close_matches(name, list(allowed), n=1, cutoff=0.5)
    shared = any(set(split_identifier(name)) & set(split_identifier(a)) for a in allowed)
    return not close and not shared


_NUMERIC_TYPES = frozenset({"number", "integer", "boolean"})


class WrongType(FaultBase):
    """Sends a number or boolean as a string ("25" for 25, "true" for true). Shapes: all; only
    for calls with a number, integer or boolean argument. The executor coerces it silently
    (the result lists the coercion)."""

    kind = "wrong_type"
    about = 'sends a number or boolean as a string ("5" for 5)'

    def alter_decision(self, decision: Decision, context: FaultContext) -> Decision:
        found = first_argument(decision, lambda call: typed_arguments(call, context))
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
    about = "calls the same tool with the same arguments again after it has the result"

    def alter_decision(self, decision: Decision, context: FaultContext) -> Decision:
        conversation = context.conversation
        done = [e for turn in conversation.turns for e in turn if not e.failed]
        applicable = decision.is_answer and bool(done) and bool(conversation.tools)
        if not self.fires(context, applicable):
            return decision
        # The same tool and arguments, as they ran (a placeholder put in): a call of its own,
        # waiting for nothing.
        call = replace(done[-1].call, ref=None, depends_on=())
        if asks_in_chinese(context):
            lead_in = f"我再调用一次 {call.name} 确认一下。"
        else:
            lead_in = f"Let me call {call.name} once more to be sure."
        return Decision((call,), lead_in)

    def had_opportunity(self, context: FaultContext) -> bool:
        turns = context.conversation.turns
        return any(_REPEATED_NOTE in (e.result or "") for turn in turns for e in turn)


DECIDING = (NoTool, UnknownTool, WrongParam, MissingArg, ExtraArg, WrongType, RepeatCall)
