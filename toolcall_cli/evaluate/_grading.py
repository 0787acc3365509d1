"""An answer against the answer a case expects: figures read from Chinese and English text
(every expected one within a tolerance, or rounded as the answer wrote it), any of a set of
strings, clock times, a regular expression. And what is no answer at all (an echoed engine
note, a call written out, a tool result handed back raw), told apart from a wrong one."""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from toolcall_cli.evaluate._matching import Tolerance

# --- what is expected ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ExpectedAnswer:
    """What a right answer holds; each part given must hold."""

    numbers: tuple[float, ...] = ()
    """Every one must appear in the answer."""
    texts: tuple[str, ...] = ()
    """One of these must appear in the answer (case and weekday spelling aside)."""
    times: tuple[tuple[int, int], ...] = ()
    """Clock times (hour, minute), each in a 24- or 12-hour form."""
    pattern: str | None = None
    """A regular expression the answer must match somewhere."""
    tolerance: Tolerance | None = None
    """How far a figure may be off; None: it must round to the expected one as the answer
    wrote it ("41.84" or "42" for 41.8429, never "443" for 444)."""

    def describe(self) -> str:
        parts = []
        if self.numbers:
            parts.append(" and ".join(f"{n:g}" for n in self.numbers))
        if self.texts:
            parts.append(" or ".join(self.texts))
        if self.times:
            parts.append(" and ".join(f"{h:02d}:{m:02d}" for h, m in self.times))
        if self.pattern:
            parts.append(f"/{self.pattern}/")
        return "; ".join(parts)

    def holds(self, answer: str) -> bool:
        """Whether `answer` is right."""
        if self.times and not set(self.times) <= times_in(answer):
            return False
        if self.texts:
            folded = _folded(answer)
            if not any(_folded(text) in folded for text in self.texts):
                return False
        if self.pattern is not None and re.search(self.pattern, answer) is None:
            return False
        readings = [reading for figure in _readings(answer) for reading in figure]
        return all(
            any(self._close(value, half, want) for value, half in readings) for want in self.numbers
        )

    def _close(self, value: float, half: float, want: float) -> bool:
        if self.tolerance is not None:
            return self.tolerance.close(value, want)
        return abs(value - want) <= half * (1 + 1e-9) + 1e-9


# --- figures and times in text ------------------------------------------------------------------

_NUMBER = re.compile(
    r"(?P<neg>零下|负|minus\s|[-−–](?=\d))?\s*"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"\s*(?P<scale>万|亿|thousand|million|billion|k\b|m\b|bn\b)?",
    re.I,
)
_SCALES = {
    "万": 1e4,
    "亿": 1e8,
    "thousand": 1e3,
    "k": 1e3,
    "million": 1e6,
    "m": 1e6,
    "billion": 1e9,
    "bn": 1e9,
}


def figures_in(text: str) -> list[tuple[float, ...]]:
    """Every number in a text, each with its readings: "1.2 亿" gives (1.2, 120000000)."""
    return [tuple(value for value, _ in figure) for figure in _readings(text)]


def _readings(text: str) -> list[tuple[tuple[float, float], ...]]:
    """Each number's readings as (value, half a unit of its last written digit): "41.8" is
    (41.8, 0.05), "1.2 亿" also (120000000, 5000000)."""
    found: list[tuple[tuple[float, float], ...]] = []
    for match in _NUMBER.finditer(text):
        first = match.start("neg") if match.group("neg") else match.start("num")
        before = text[max(0, first - 1) : first]
        if before == "_" or (before.isalnum() and before.isascii()):  # "call_1_0", "H2O"
            continue
        written = match.group("num").replace(",", "")
        value = -float(written) if match.group("neg") else float(written)
        half = 0.5 * 10.0 ** -len(written.partition(".")[2])
        scale = (match.group("scale") or "").lower()
        if scale in _SCALES:
            found.append(((value, half), (value * _SCALES[scale], half * _SCALES[scale])))
        else:
            found.append(((value, half),))
    return found


def numbers_in(text: str) -> list[float]:
    """Every number in a text, as written and scaled: "1.2 亿" gives 1.2 and 120000000."""
    return [value for figure in figures_in(text) for value in figure]


_CLOCK = re.compile(
    r"(?P<before>上午|早上|凌晨|中午|下午|晚上|傍晚)?\s*(?P<h>\d{1,2})\s*(?::|：|点|時|时)\s*"
    r"(?:(?P<m>\d{1,2})|(?P<half>半))?\s*(?:分)?\s*(?P<after>[ap]\.?\s?m\.?)?",
    re.I,
)
_AFTERNOON = ("下午", "晚上", "傍晚")
_MORNING = ("凌晨", "早上", "上午")


def times_in(text: str) -> set[tuple[int, int]]:
    """Clock times in a text, 24-hour: "2:30 PM", "14:30", "下午2点30分", "3点半"."""
    found: set[tuple[int, int]] = set()
    for match in _CLOCK.finditer(text):
        hour = int(match.group("h"))
        minute = 30 if match.group("half") else int(match.group("m") or 0)
        after = (match.group("after") or "").lower().replace(".", "").replace(" ", "")
        if after == "pm" or match.group("before") in _AFTERNOON:
            hour = hour + 12 if hour < 12 else hour
        elif (after == "am" or match.group("before") in _MORNING) and hour == 12:
            hour = 0
        if hour < 24 and minute < 60:
            found.add((hour, minute))
    return found


def clock(text: str) -> tuple[int, int]:
    """ "15:30" or "15:30:00" as (15, 30); ValueError when it is no clock time."""
    hour, minute = (int(part) for part in text.split(":")[:2])
    if not (0 <= hour < 24 and 0 <= minute < 60):
        raise ValueError(f"not a clock time: {text!r}")
    return hour, minute


_WEEKDAY_ZH = re.compile(r"(?:周|礼拜|禮拜|星期)([一二三四五六日天])")


def _folded(text: str) -> str:
    """Case folded, with 周五 / 礼拜五 / 星期天 written 星期五 / 星期日."""
    return _WEEKDAY_ZH.sub(lambda m: "星期" + m.group(1).replace("天", "日"), text).casefold()


# --- what is no answer --------------------------------------------------------------------------

NonAnswer = Literal[
    "empty",
    "echoed engine note",
    "echoed tool error",
    "bare tool name",
    "call-shaped",
    "echoed tool result",
]

ENGINE_NOTES = (
    "[toolcall]",
    "was not an answer",
    "note instead of",
    "the last 3 rounds",
    "rounds of tool calls made no progress",
    "i already called",
    "you already called",
    "tools are withdrawn",
    "do not call any tool",
    "that was the last round",
    "answer with what you have",
    "<tool_result",
    # notes of the engine's own, repeated as the answer by a small model
    "(the same call",
    "a result you already have",
    "the result you already had",
    "result you already have from this run",
    "error: unknown tool",
    # an agent framework's own words, returned as its answer: LangGraph's at its step limit;
    # smolagents' note on an empty reply, which the model then gave as its final answer
    "need more steps to process this request",
    "did not contain any json blob",
)


def _call_shaped(value: Any) -> bool:
    if isinstance(value, list):
        return bool(value) and all(_call_shaped(v) for v in value)
    if not isinstance(value, dict):
        return False
    keys = set(value)
    return bool(
        {"tool_calls", "function", "tool_call"} & keys
        or ("name" in keys and keys & {"arguments", "parameters", "args"})
        # a result the model made up in a call's shape: {"name": "result", "id": "2", "value": 49}
        or ("name" in keys and keys & {"id", "value", "result"} and len(keys) <= 4)
    )


def _literal(text: str) -> Any:
    """JSON, or a Python literal (a call list printed with repr), or None. Only read as data:
    ast.literal_eval evaluates no code."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return None


def _holds_a_result(text: str, results: Iterable[str]) -> bool:
    """The answer is, or holds, a tool result's raw text (a JSON object, not a bare number)."""
    return any(
        len(result) >= 20 and result.lstrip().startswith(("{", "[")) and result.strip() in text
        for result in results
    )


def non_answer_kind(
    answer: str, tool_names: Iterable[str], results: Iterable[str] = ()
) -> NonAnswer | None:
    """Why this text is not an answer at all, or None if it is one (right or wrong)."""
    text = answer.strip()
    if not text:
        return "empty"
    folded = text.casefold()
    if any(note in folded for note in ENGINE_NOTES):
        return "echoed engine note"
    if folded.startswith("error"):
        return "echoed tool error"
    bare = text.strip("`'\" .。")
    if bare in set(tool_names) or re.fullmatch(r"call_\d+_\d+", bare):
        return "bare tool name"
    if "<tool_call>" in folded:
        return "call-shaped"
    return _written_out_kind(text, results)


def _written_out_kind(text: str, results: Iterable[str]) -> NonAnswer | None:
    unfenced = re.sub(r"^```\w*\s*|\s*```$", "", text)
    # an agent's own at-the-limit answer can be "Calling tools:\n[{'id': ..., 'function': ...}]"
    unfenced = re.sub(r"^Calling tools:\s*", "", unfenced)
    value = _literal(unfenced) if len(unfenced) <= 100_000 else None
    if _call_shaped(value):
        return "call-shaped"
    if re.match(r'^\s*\{\s*"name"\s*:\s*"\w+"\s*,\s*"(arguments|parameters)"', unfenced):
        return "call-shaped"  # a call cut short or with broken JSON
    # A tool result handed back as it came, or any bare JSON object: data for the model to
    # read, not an answer for a person.
    if _holds_a_result(text, results) or isinstance(value, dict):
        return "echoed tool result"
    return None


def grounded(figure: tuple[float, ...], sources: Iterable[float]) -> bool:
    """Whether one of a figure's readings is one of the figures it could have come from."""
    return any(
        math.isclose(value, source, rel_tol=0.01, abs_tol=0.06)
        for value in figure
        for source in sources
    )


def invented(answer: str, question: str, results: Iterable[str]) -> bool:
    """Whether the answer states a figure found neither in the question nor in any result."""
    sources = numbers_in(question) + [n for result in results for n in numbers_in(result)]
    return any(not grounded(figure, sources) for figure in figures_in(answer))
