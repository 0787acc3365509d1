"""Grounding: whether the figures a model hands to a tool, or states in its answer, come from
the conversation (the question, the results) or from nowhere.

A small model invents the first figure of a two-step question and calls the second tool with it
(convert_units(value=25, from_unit="°C", ...) for "北京明天天气怎么样？", no 25 anywhere), and
answers "2" when the tool said 126. Such a call is not run the first time: the model is told
which value came from nowhere. The same call sent again runs, with a note, so a figure the
model knows rightly is never refused twice. Such an answer gets one nudge that names the
results; the next answer stands, marked.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolcall_cli.events import GroundingAction, GroundingChecked
from toolcall_cli.feedback import Problem
from toolcall_cli.history import ENGINE_NOTE_PREFIX, SUMMARY_PREFIX, preview, result_data
from toolcall_cli.limits import GroundingMode
from toolcall_cli.messages import Message, ToolCall, ToolResult, call_key
from toolcall_cli.tools.executor import error_result

_FIGURE = re.compile(r"(?<![\w.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|-?\d+(?:\.\d+)?")
"""A figure as people and tools write it: 41.84, -3, 1,234,567 (with its thousands commas)."""
_WHOLE_FIGURE = re.compile(r"\s*[-+]?\d+(?:\.\d+)?\s*")
SCHEMA_FIGURES = ("enum", "const", "default", "minimum", "maximum", "exclusiveMinimum",
                  "exclusiveMaximum", "multipleOf")  # fmt: skip
"""Where a tool's schema itself gives a figure a call may take. Not the description's examples:
"e.g. 25" in convert_units' description is where the invented 25 came from."""


_SMALL = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
          "fourteen fifteen sixteen seventeen eighteen nineteen twenty")  # fmt: skip
_SMALL_WORDS = _SMALL.split(" ")
_WORDS = {word: float(value) for value, word in enumerate(_SMALL_WORDS)} | {
    "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
    "ninety": 90, "hundred": 100, "thousand": 1000, "million": 1e6, "dozen": 12, "half": 0.5,
    "twice": 2, "double": 2, "triple": 3,
}  # fmt: skip
"""Figures a question spells out ("round to two decimals"): a call with 2 for them is grounded."""
_WORD = re.compile(r"[A-Za-z]+")
_CHINESE_DIGITS = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"〇": 0, "两": 2}
_CHINESE_UNITS = {"十": 10, "百": 100, "千": 1000}
_CHINESE_NUMBER = re.compile(r"[零〇一二两三四五六七八九十百千万]+")


def figures_in(text: str) -> list[float]:
    """Every figure written in `text`, as a number: in digits, and spelled out in English or
    Chinese (二十六英里 is 26 miles)."""
    found = []
    for match in _FIGURE.finditer(text):
        try:
            found.append(float(match.group().replace(",", "")))
        except ValueError:
            continue
    found += [_WORDS[w] for w in _WORD.findall(text.lower()) if w in _WORDS]
    found += [chinese_number(m.group()) for m in _CHINESE_NUMBER.finditer(text)]
    return found


def chinese_number(text: str) -> float:
    """二十六 is 26, 一百零五 105, 三万 30000: the numbers a question spells in Chinese."""
    total, section, digit = 0, 0, 0
    for char in text:
        if char in _CHINESE_DIGITS:
            digit = _CHINESE_DIGITS[char]
        elif char in _CHINESE_UNITS:
            section += (digit or 1) * _CHINESE_UNITS[char]  # 十五: a ten with no digit before
            digit = 0
        else:  # 万
            total += (section + digit) * 10_000
            section, digit = 0, 0
    return float(total + section + digit)


# --- the question's own arithmetic ---------------------------------------------------------------

_OPERATOR_WORDS = (
    (re.compile(r"\b(?:plus|added to)\b", re.IGNORECASE), "+"),
    (re.compile(r"\bminus\b", re.IGNORECASE), "-"),
    (re.compile(r"\b(?:times|multiplied by)\b", re.IGNORECASE), "*"),
    (re.compile(r"\bdivided by\b", re.IGNORECASE), "/"),
    (re.compile("加上|加"), "+"),
    (re.compile("减去|减"), "-"),
    (re.compile("乘以|乘"), "*"),
    (re.compile("除以"), "/"),
)
"""The operators a question may spell out, English and Chinese, as symbols."""
_SYMBOLS = str.maketrans({"×": "*", "÷": "/", "^": "**", "−": "-", "（": "(", "）": ")",
                          "＋": "+", "－": "-", "＊": "*", "／": "/"})  # fmt: skip
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_ARITHMETIC_RUN = re.compile(r"[-+(]*\d[\d.\s()+\-*/]*")
_DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}-\d{1,2}-\d{4}")
_OPERATIONS: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
MAX_EXPONENT = 64
"""A power the question writes is worked out up to this exponent (2^10 is; 9^9^9 is not)."""
MAX_EXPRESSION = 200
"""Longer arithmetic in a question is left alone: the tree is walked by recursion."""


def worked_out(question: str) -> list[float]:
    """The values of the arithmetic a question writes, in symbols or words ("2+2", "7 times
    8", "三加五", "(2^10 - 16) / 8"). Read as a syntax tree of numbers and + - * / and powers,
    never run; a date's dashes are no subtraction."""
    text = _THOUSANDS.sub("", question.translate(_SYMBOLS))
    for words, symbol in _OPERATOR_WORDS:
        text = words.sub(f" {symbol} ", text)
    text = _CHINESE_NUMBER.sub(lambda m: f" {chinese_number(m.group()):g} ", text)
    text = _WORD.sub(lambda m: _spelled_digit(m.group()), text)
    values = []
    for run in _ARITHMETIC_RUN.finditer(text):
        expression = balanced(run.group().strip())
        if len(expression) > MAX_EXPRESSION or _DATE.search(expression):
            continue
        if not any(c in expression[1:] for c in "+-*/"):
            continue  # a figure alone
        value = expression_value(expression)
        if value is not None:
            values.append(value)
    return values


def _spelled_digit(word: str) -> str:
    """A number spelled out as a word ("seven"), in digits; any other word stays."""
    lowered = word.lower()
    return f" {_WORDS[lowered]:g} " if lowered in _SMALL_WORDS else word


def balanced(expression: str) -> str:
    """The expression without the parentheses of the sentence around it ("(e.g. 3+4)")."""
    while expression.count("(") > expression.count(")") and expression.startswith("("):
        expression = expression[1:].strip()
    while expression.count(")") > expression.count("(") and expression.endswith(")"):
        expression = expression[:-1].strip()
    return expression


def expression_value(expression: str) -> float | None:
    try:
        return _value(ast.parse(expression, mode="eval").body)
    except (SyntaxError, ValueError, ArithmeticError, TypeError):
        return None


def _value(node: ast.expr) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return float(node.value)  # a bool cannot be written in the digits read
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _value(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATIONS:
        left, right = _value(node.left), _value(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise ValueError("a power too large to work out")
        value = _OPERATIONS[type(node.op)](left, right)
        if not isinstance(value, float) or not math.isfinite(value):
            raise ValueError("no real number")
        return value
    raise ValueError("not arithmetic")


def decimals(figure: str) -> int:
    _, _, fraction = figure.partition(".")
    return len(fraction)


def same_figure(given: float, written: str, known: float) -> bool:
    """`given` (written as `written`) is `known`, or `known` rounded as `given` is written: 41.84
    and 42 are both 41.842944."""
    if math.isclose(given, known, rel_tol=1e-9, abs_tol=1e-12):
        return True
    return abs(abs(given) - abs(known)) <= 0.5 * 10.0 ** -decimals(written) + 1e-9


@dataclass
class Grounds:
    """The figures a run may use: the question's and the conversation's before it, and those of
    every result that succeeded."""

    figures: list[float] = field(default_factory=list)
    results: list[tuple[str, str]] = field(default_factory=list)
    """Each result that succeeded, by tool name, as the model read it (its notes left out)."""

    def holds(self, written: str) -> bool:
        try:
            given = float(written.replace(",", ""))
        except ValueError:
            return True  # not a figure: nothing to ground
        return any(same_figure(given, written, known) for known in self.figures)


def grounds_of(history: Sequence[Message], first_message: int) -> Grounds:
    """What a figure may come from: the user's questions; the conversation's earlier answers
    (a follow-up such as "and in °F?" leans on them); the results that succeeded. Not toolcall's
    notes, not an error (an error quotes the call it refuses), not the model's own words in this
    run."""
    grounds = Grounds()
    for index, message in enumerate(history):
        text = message.content or ""
        asked = message.role == "user" and not text.startswith((ENGINE_NOTE_PREFIX, SUMMARY_PREFIX))
        answered_before = message.role == "assistant" and index < first_message
        if asked or answered_before:
            grounds.figures += figures_in(text)
        elif message.role == "tool" and not text.startswith("Error:"):
            data = result_data(text)
            grounds.figures += figures_in(data)
            grounds.results.append((message.name or "", data))
    return grounds


def argument_figures(arguments: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(`name=value`, the figure as written) for every figure handed over as a value: a JSON
    number, or a string that is only a number. Figures inside a longer string (an expression,
    a date, a UTC offset) are the model's working, not a value it carries over, and are left
    alone."""
    if isinstance(arguments, bool) or arguments is None:
        return
    if isinstance(arguments, (int, float)):
        written = repr(arguments) if isinstance(arguments, float) else str(arguments)
        yield f"{path}={written}", written
    elif isinstance(arguments, str) and _WHOLE_FIGURE.fullmatch(arguments):
        yield f"{path}={arguments.strip()!r}", arguments.strip().lstrip("+")
    elif isinstance(arguments, Mapping):
        for key, value in arguments.items():
            yield from argument_figures(value, f"{path}.{key}" if path else str(key))
    elif isinstance(arguments, list):
        for number, item in enumerate(arguments):
            yield from argument_figures(item, f"{path}[{number}]")


def schema_figures(schema: Any) -> list[float]:
    """The figures a tool's schema itself gives (enum values, defaults, bounds), at any depth."""
    found: list[float] = []
    if isinstance(schema, Mapping):
        for key, value in schema.items():
            if key in SCHEMA_FIGURES:
                values = value if isinstance(value, list) else [value]
                found += [float(v) for v in values if _a_number(v)]
            elif key not in ("description", "examples", "title"):
                found += schema_figures(value)
    elif isinstance(schema, list):
        for item in schema:
            found += schema_figures(item)
    return found


def _a_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# --- arguments ----------------------------------------------------------------------------------

NOT_GROUNDED = (
    "not run: {values} appear{s} neither in the question nor in any result of this run (nor "
    "in {tool}'s schema), so {it} came from nowhere. A value that another tool gives needs "
    "that tool called first, and its result used (the tools: {tools}); a value from the "
    "question is written as the question has it. If {it} is right, send the same call again "
    "and it runs."
)
RAN_ON_REPEAT = (
    ENGINE_NOTE_PREFIX + " Run as sent again: {values} still appear{s} in no result and not in "
    "the question; say so if the answer rests on {it}."
)


@dataclass(frozen=True)
class ArgumentVerdict:
    """What becomes of a call with figures from nowhere: the event the view shows, and either
    the refusal the model reads instead of a result, or a note after its result."""

    event: GroundingChecked
    refusal: ToolResult | None = None
    note: str | None = None


class ArgumentCheck:
    """One run's check of the figures in its calls' arguments (--grounding)."""

    def __init__(self, mode: GroundingMode, tools: Sequence[str] = ()) -> None:
        self.mode = mode
        self.tools = tuple(tools)
        self.grounds = Grounds()
        self.refused: set[tuple[str, str]] = set()
        """Calls refused once for their figures: sent again unchanged, they run."""

    def read(self, history: Sequence[Message], first_message: int) -> None:
        """The conversation so far: what the next round's figures may come from."""
        if self.mode != "off":
            self.grounds = grounds_of(history, first_message)

    def verdict(
        self,
        call: ToolCall,
        arguments: Mapping[str, Any],
        schema: Mapping[str, Any],
        also: Sequence[str] = (),
    ) -> ArgumentVerdict | None:
        """None when every figure of `arguments` is grounded (or the check is off). `also`: the
        results this round has given so far, which a call that waited for them (--dag) takes
        its figures from."""
        loose = self.loose(arguments, schema, also) if self.mode != "off" else []
        if not loose:
            return None
        values = ", ".join(f"`{shown}`" for shown in loose)
        words = {"values": values, "s": "s" if len(loose) == 1 else "", "it": _it(loose)}
        key = call_key(call)
        if self.mode == "warn":
            return ArgumentVerdict(self._event(call, loose, "warned"))
        if key in self.refused:
            note = RAN_ON_REPEAT.format(**words)
            return ArgumentVerdict(self._event(call, loose, "ran_on_repeat"), note=note)
        self.refused.add(key)
        others = ", ".join(t for t in self.tools if t != call.name) or "none"
        message = NOT_GROUNDED.format(tool=call.name, tools=others, **words)
        refusal = error_result(call, "ungrounded", Problem("ungrounded", call.name, detail=message))
        return ArgumentVerdict(self._event(call, loose, "refused"), refusal=refusal)

    def loose(
        self, arguments: Mapping[str, Any], schema: Mapping[str, Any], also: Sequence[str]
    ) -> list[str]:
        """`name=value` for each figure of `arguments` from nowhere."""
        allowed = Grounds(schema_figures(schema) + [f for text in also for f in figures_in(text)])
        return [
            shown
            for shown, written in argument_figures(dict(arguments))
            if not self.grounds.holds(written) and not allowed.holds(written)
        ]

    def _event(self, call: ToolCall, loose: list[str], action: GroundingAction) -> GroundingChecked:
        return GroundingChecked(
            what="arguments", action=action, figures=tuple(loose), call=call, mode=self.mode
        )


def _it(values: Sequence[str]) -> str:
    return "it" if len(values) == 1 else "they"


# --- answers ------------------------------------------------------------------------------------

ANSWER_NOT_GROUNDED = ENGINE_NOTE_PREFIX + (
    " Your answer gives {figures}, which no tool result holds. The results are: {results}. "
    "Answer the question again from these results, with their figures."
)
COMPUTED_WITHOUT_TOOLS = ENGINE_NOTE_PREFIX + (
    " Your answer gives {figures}, which no tool has given and the question does not hold. Do "
    "not work figures out in your head: call the tool that gives or computes {it} (the tools: "
    "{tools}), then answer from its result."
)
_QUOTED = re.compile(r'"[^"\n]*"|“[^”\n]*”|`[^`\n]*`|「[^」\n]*」')
"""Quoted text in an answer is cited, not stated: "I need the expression (e.g. "12*5+3")"
asks the user for input with calculate's own examples."""
RESULT_CHARS = 300
"""How much of each result the nudge names: enough for its figures, not a flood."""


class AnswerCheck:
    """One run's check of its answer's figures: one nudge, and the next answer stands."""

    def __init__(self, mode: GroundingMode) -> None:
        self.mode = mode
        self.nudge_spent = False
        """The one nudge is used: given, or given up on (no_nudge_left)."""

    def no_nudge_left(self) -> None:
        """No nudge can help: no tool left to send the model to and no result to show it (a
        nudge could only ask it to guess again), or no request left after this answer. Under
        check the answer stands, marked, without one."""
        if self.mode == "check":
            self.nudge_spent = True

    def look(
        self, text: str, question: str, history: Sequence[Message], first: int, tools: Sequence[str]
    ) -> tuple[GroundingChecked, str | None] | None:
        """The verdict on an answer given after `history` (this run's from `first`), with
        `tools` offered."""
        if self.mode == "off":
            return None
        return self.verdict(text, question, grounds_of(history, first), tools)

    def verdict(
        self, text: str, question: str, grounds: Grounds, tools: Sequence[str]
    ) -> tuple[GroundingChecked, str | None] | None:
        """None when the answer's figures are grounded (or nothing can be said); else the event
        the view shows and the note for the model (None: the answer stands, marked)."""
        if self.mode == "off":
            return None
        loose = self.loose_figures(text, question, grounds, tools)
        if not loose:
            return None
        if self.nudge_spent or self.mode == "warn":
            action: GroundingAction = "stands" if self.nudge_spent else "warned"
            return GroundingChecked(
                what="answer", action=action, figures=loose, mode=self.mode
            ), None
        self.nudge_spent = True
        note = self.nudge(loose, grounds, tools)
        return GroundingChecked(what="answer", action="nudged", figures=loose, mode=self.mode), note

    @staticmethod
    def loose_figures(
        text: str, question: str, grounds: Grounds, tools: Sequence[str]
    ) -> tuple[str, ...]:
        """Results there being, when none of the answer's figures is in a result: those not in
        the question, else the question's it gave back (126 came back and the answer was "2").
        No result there being, figures other than the question's, while tools could give them."""
        written = [m.group() for m in _FIGURE.finditer(_QUOTED.sub(" ", text))]
        asked, worked = Grounds(figures_in(question)), Grounds(worked_out(question))
        # The question's own arithmetic worked out right ("4" for "2+2?") is no figure from
        # nowhere; worked out wrong ("443" for 23*19+7), it is.
        stated = [figure for figure in written if not worked.holds(figure)]
        own = [figure for figure in stated if not asked.holds(figure)]
        if grounds.results:
            given = Grounds([f for _, data in grounds.results for f in figures_in(data)])
            if any(given.holds(figure) for figure in written):
                return ()
            # Named: the figures of its own ("2^10 is 1000": 1000), else the question's it gave
            # back as the answer ("2" after 126 came back), unless it worked them out too.
            gave_back = stated if len(stated) == len(written) else []
            return tuple(dict.fromkeys(own or gave_back))
        return tuple(dict.fromkeys(own)) if tools else ()

    @staticmethod
    def nudge(loose: Sequence[str], grounds: Grounds, tools: Sequence[str]) -> str:
        figures = ", ".join(loose)
        if grounds.results:
            gave = [
                f"{name or 'a tool'} gave {preview(data, RESULT_CHARS)}"
                for name, data in grounds.results
            ]
            shown = "; ".join(gave)
            return ANSWER_NOT_GROUNDED.format(figures=figures, results=shown)
        return COMPUTED_WITHOUT_TOOLS.format(figures=figures, it=_it(loose), tools=", ".join(tools))
