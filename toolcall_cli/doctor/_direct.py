"""Step 1: should a tool have been called while the model answered directly (硬答)?

Judged only from what a reader of the trace sees: the question, the tools' descriptions and the
answer. A tool fits when words of the question (Chinese: character bigrams) appear in its name,
description or parameter descriptions; the answer looks made up when it states numbers or live
data that no tool result stands behind.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from toolcall_cli.doctor._model import Finding, Record, RunRecords, Step

QUESTION = "Should a tool have been called, where the model answered directly (硬答)?"

ENOUGH = 3
"""Shared words and signs in the answer it takes to call an answer 硬答: a city name shared with
a weather tool is not enough alone ("北京有什么好吃的？"), with a live-data question it is."""

_WORD = re.compile(r"[a-z][a-z0-9]*")
_HAN = re.compile(r"[\u3400-\u9fff]+")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_UNIT = re.compile(r"°\s?[CF]|℃|℉")
# An expression has no words to share with a calculator's description, so it stands for some.
_EXPRESSION = re.compile(r"\d\s*(?:[+*/×÷^%]|\*\*)\s*[\d(]|\d\s+-\s+\d")
_ARITHMETIC_TERMS = frozenset({"arithmetic", "math", "calculate", "calculation", "compute"})


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_STOP_WORDS = _words(
    "the and for with what whats how are was were get use can you your this that from into "
    "about any one its not yes then than also only like much many more most very just some "
    "tell please give show which when where who why will would should could there here has "
    "have had does did done want need know let lets see such each other else"
)
_STOP_BIGRAMS = _words(
    "什么 怎么 么样 多少 一个 可以 请问 是多 我们 你们 他们 这个 那个 是不 不是 有没 没有"
)
_BRIDGE: dict[str, tuple[str, ...]] = {
    # A Chinese question meets an English description through these (and only these) words.
    "天气": ("weather",),
    "气温": ("temperature", "weather"),
    "温度": ("temperature",),
    "下雨": ("rain", "weather"),
    "时间": ("time",),
    "几点": ("time",),
    "日期": ("date",),
    "换算": ("convert",),
    "计算": ("calculate",),
    "股价": ("stock", "price"),
    "股票": ("stock",),
    "价格": ("price",),
    "汇率": ("exchange", "rate"),
    "新闻": ("news",),
}
_LIVE = _words(
    "weather temperature forecast today tomorrow now current "
    "currently latest price stock news rate 天气 气温 温度 今天 明天 现在 目前 "
    "最新 实时 股价 股票 新闻 几点 价格 汇率 下雨"
)


def check_direct_answer(run: RunRecords, header: dict[str, Any]) -> Step:
    final = run.last("final_answer")
    calls = run.of("tool_call_parsed", "parse_error")
    if calls:
        names = sorted({str(c.data["call"]["name"]) for c in calls if "call" in c.data})
        first = calls[0].iteration
        called = ", ".join(names) or "a tool (its call could not be read)"
        summary = f"no: the model called {called} (first at iteration {first})"
        made_up = tuple(_made_up_figures(final))
        if made_up:
            summary += ", but answered with figures no result holds"
        return Step(1, QUESTION, summary, made_up)
    if final is None:
        return Step(1, QUESTION, "nothing to judge: the run gave no answer (see step 4)")
    fit = best_fit(run.question, tool_texts(header, run))
    evidence = list(answer_evidence(run.question, str(final.data.get("text", ""))))
    if fit is None or len(fit.shared) + len(evidence) < ENOUGH:
        why = "no tool fits the question" if fit is None else f"only `{fit.tool}` fits, weakly"
        return Step(1, QUESTION, f"no: answered directly, and {why}")
    message = (
        f"answered directly at iteration {final.iteration}, though `{fit.tool}` fits the "
        f"question (shared words: {', '.join(sorted(fit.shared))}); {'; '.join(evidence)}"
    )
    finding = Finding.at(final, "hard_answer", message, tool=fit.tool)
    return Step(1, QUESTION, f"yes: `{fit.tool}` should have been called (硬答)", (finding,))


def _made_up_figures(final: Record | None) -> Iterator[Finding]:
    """An answer after tools that states figures no result holds: the live view marked it
    (`answer (unchecked: ...)`), so the doctor does not call the run clean."""
    figures = final.data.get("ungrounded") if final else None
    if final is None or not isinstance(figures, list) or not figures:
        return
    stated = ", ".join(map(str, figures))
    message = f"the answer states {stated}, in neither the question nor any tool result"
    yield Finding.at(final, "ungrounded_answer", message)


@dataclass(frozen=True)
class Fit:
    tool: str
    shared: frozenset[str]


def best_fit(question: str, texts: dict[str, str]) -> Fit | None:
    """The tool sharing the most words with the question, or None when none shares any."""
    wanted = question_terms(question)
    fits = [Fit(name, frozenset(wanted & terms(text))) for name, text in texts.items()]
    fits = [fit for fit in fits if fit.shared]
    return max(fits, key=lambda fit: len(fit.shared)) if fits else None


def answer_evidence(question: str, answer: str) -> Iterator[str]:
    """Why the answer looks like it needed a tool, one reason a line."""
    live = sorted(_live_words(question))
    if live:
        yield f"the question asks for live data ({', '.join(live)})"
    expression = _EXPRESSION.search(question)
    if expression:
        yield "the question holds a calculation"
    asked = set(_NUMBER.findall(question))
    stated = [n for n in dict.fromkeys(_NUMBER.findall(answer)) if n not in asked]
    if stated:
        yield f"the answer states {', '.join(stated[:4])} with no tool result behind them"
    spoken = sorted(_live_words(answer) | set(_UNIT.findall(answer)))
    if spoken:
        yield f"the answer speaks of live data ({', '.join(spoken[:4])})"


def _live_words(text: str) -> set[str]:
    return {term for term in terms(text) if term in _LIVE}


def question_terms(question: str) -> set[str]:
    found = terms(question)
    for term in list(found):
        found.update(_BRIDGE.get(term, ()))
    if _EXPRESSION.search(question):
        found.update(_ARITHMETIC_TERMS)
    return found


def terms(text: str) -> set[str]:
    """English words (lower case, a plural `s` dropped, small words left out) and Chinese
    character bigrams."""
    words = _WORD.findall(text.lower().replace("_", " "))
    found = {_singular(w) for w in words if len(w) > 2 and w not in _STOP_WORDS}
    for run in _HAN.findall(text):
        found.update(run[i : i + 2] for i in range(len(run) - 1))
    return found - _STOP_BIGRAMS


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 4 and word.endswith("s") and not word.endswith("ss") else word


# --- what the model was told of each tool -------------------------------------------------------


def tool_texts(header: dict[str, Any], run: RunRecords) -> dict[str, str]:
    """Each tool's name and descriptions: from the v1 header, else from the run's first request
    (native `tools`, a JSON-mode schema, or the text protocol's system prompt)."""
    specs = header.get("tools")
    if isinstance(specs, list) and specs:
        return {str(s.get("name")): spec_text(s) for s in specs if isinstance(s, dict)}
    first = run.first("iteration_started")
    request = first.data.get("request") if first else None
    request = request if isinstance(request, dict) else {}
    texts = {name: name for name in run.started.get("tools") or []}
    texts.update(_from_native(request))
    texts.update(_from_json_schema(request))
    texts.update(_from_system_prompt(request, texts))
    return texts


def spec_text(spec: dict[str, Any]) -> str:
    return " ".join([str(spec.get("name", "")), *_descriptions(spec)])


def _descriptions(value: Any) -> Iterator[str]:
    """Every description in a spec or JSON Schema, with each property's name and enum values."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "description" and isinstance(item, str):
                yield item
            elif key == "properties" and isinstance(item, dict):
                yield from map(str, item)
                yield from _descriptions(list(item.values()))
            elif key == "enum" and isinstance(item, list):
                yield from map(str, item)
            else:
                yield from _descriptions(item)
    elif isinstance(value, list):
        for item in value:
            yield from _descriptions(item)


def _from_native(request: dict[str, Any]) -> dict[str, str]:
    functions = [t.get("function") for t in request.get("tools") or [] if isinstance(t, dict)]
    return {str(f["name"]): spec_text(f) for f in functions if isinstance(f, dict) and "name" in f}


def _from_json_schema(request: dict[str, Any]) -> dict[str, str]:
    schema = _at(request, "response_format", "json_schema", "schema")
    branches = schema.get("anyOf")
    texts = {}
    for branch in branches if isinstance(branches, list) else []:
        name = _at(branch, "properties", "name").get("const")
        if isinstance(name, str):
            texts[name] = " ".join([name, *_descriptions(branch)])
    return texts


def _at(value: Any, *keys: str) -> dict[str, Any]:
    """The object at `keys` down from `value`; empty where the way is not objects (a trace is
    anybody's file)."""
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, dict) else {}


def _from_system_prompt(request: dict[str, Any], known: Iterable[str]) -> dict[str, str]:
    """The text protocol lists each tool under a `## name` heading of the system prompt."""
    messages = request.get("messages") or []
    system = next((m for m in messages if isinstance(m, dict) and m.get("role") == "system"), {})
    prompt = system.get("content")
    if not isinstance(prompt, str):
        return {}
    texts = {}
    for name in known:
        section = re.search(rf"^##\s+{re.escape(name)}\s*$(.*?)(?=^#|\Z)", prompt, re.M | re.S)
        if section:
            texts[name] = f"{name} {section.group(1)}"
    return texts
