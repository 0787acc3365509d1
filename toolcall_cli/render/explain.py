"""--explain: a short note after each step of a run, naming the layer that acted (protocol,
execution or loop) and why. The notes are read off the events by one table, in English and
Chinese; nothing in the loop knows about them, and the trace does not hold them (they follow
from the events it does hold).

In the live and plain views a note is shown as an info notice; in --json it is its own record,
`{"kind": "explain", "about": ..., "layer": ..., "note": ...}`, after the event it explains.
"""

from __future__ import annotations

import re
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Literal

from toolcall_cli.events import (
    Event,
    FinalAnswer,
    GroundingChecked,
    LimitReached,
    Notice,
    RunStarted,
    ToolFinished,
)
from toolcall_cli.render._jsonl import JsonLinesRenderer
from toolcall_cli.render._plain import QuietRenderer
from toolcall_cli.render.base import Renderer

Lang = Literal["en", "zh"]
Layer = Literal["protocol", "execution", "loop"]

CHINESE_LAYERS: dict[Layer, str] = {"protocol": "协议层", "execution": "执行层", "loop": "循环层"}

NOTES: dict[str, tuple[Layer, str, str]] = {
    # key: the event kind, or kind:outcome -> (layer, English, Chinese)
    "iteration_started": (
        "loop",
        "a new iteration: the whole conversation and the tool list go to the model",
        "新的一轮：整段对话和工具列表一起发给模型",
    ),
    "tool_call_parsed": (
        "protocol",
        "the reply holds a tool call: its name and arguments were read out of it",
        "回复里有工具调用：已从中读出工具名和参数",
    ),
    "parse_error": (
        "protocol",
        "the call could not be read: the error goes back to the model as a tool result, so it "
        "can write the call again",
        "调用无法解析：错误作为工具结果发回给模型，让它重写调用",
    ),
    "tool_finished:ok": (
        "execution",
        "the tool ran: its result goes back to the model in the next request",
        "工具已执行：结果会在下一次请求中发回给模型",
    ),
    "tool_finished:reused": (
        "execution",
        "the same call as before: the earlier result is reused and the tool does not run again",
        "与之前的调用相同：直接复用先前的结果，工具不再执行",
    ),
    "tool_finished:invalid_arguments": (
        "execution",
        "validation failed: the error goes back to the model as a tool result, so it can fix "
        "its arguments",
        "参数校验失败：错误作为工具结果发回给模型，让它修正参数",
    ),
    "tool_finished:unknown_tool": (
        "execution",
        "no tool has that name: the error lists the tools there are, so the model can pick one",
        "没有这个名字的工具：错误里列出现有工具，让模型重新选择",
    ),
    "tool_finished:timeout": (
        "execution",
        "the tool took too long and was stopped: the model is told it timed out",
        "工具执行超时被停止：模型会得知超时",
    ),
    "tool_finished:skipped_by_user": (
        "execution",
        "you skipped the call: the model reads that as its result and goes on without it",
        "你跳过了这次调用：模型把这当作结果读到，并在没有它的情况下继续",
    ),
    "tool_finished:declined": (
        "execution",
        "the dangerous tool was not approved: the model is told so and answers without it",
        "危险工具未获批准：模型会得知，并在没有它的情况下回答",
    ),
    "call_from_result": (
        "execution",
        "the call appears in an earlier tool result: text the tool read (a page, a file) may "
        "have written it, so it runs only if you approve it, whatever --yes says",
        "这个调用出现在之前的工具结果里：可能是工具读到的文本（网页、文件）写进去的，所以只有你批准才会执行，"
        "--yes 也不算数",
    ),
    "tool_finished:from_result": (
        "execution",
        "the call copied from a tool result was not run, since nobody could approve it: the "
        "model is told which result it came from",
        "从工具结果里抄来的调用没有执行，因为没有人能批准：模型会得知它来自哪个结果",
    ),
    "tool_finished:error": (
        "execution",
        "the call failed: the error goes back to the model as a tool result; the run goes on",
        "调用失败：错误作为工具结果发回给模型；运行继续",
    ),
    "tool_finished:ungrounded": (
        "loop",
        "a figure in the call's arguments is in neither the question nor any result, so the call "
        "was not run: the model is told where such a figure must come from (sent again "
        "unchanged, the call runs)",
        "调用参数里的数字既不在问题里，也不在任何结果里，所以没有执行：告诉模型这个数字该从哪里来"
        "（原样再发一次就会执行）",
    ),
    "grounding_checked:answer": (
        "loop",
        "the answer's figures are in no tool result: the model is shown the results (or told to "
        "call a tool) and asked once more; the next answer stands, marked",
        "回答里的数字不在任何工具结果里：把结果给模型看（或让它调用工具），再问一次；下一个回答照收，但会标出",
    ),
    "fed_back": (
        "loop",
        "the results were added to the conversation: the loop goes round again",
        "结果已加入对话：循环进入下一轮",
    ),
    "answer_without_tools": (
        "loop",
        "rounds made no progress (failed, or repeated a call it has the result of): tools are "
        "withdrawn and the model must answer",
        "几轮没有进展（调用失败，或重复已有结果的调用）：撤下工具，要求模型直接回答",
    ),
    "final_answer": (
        "loop",
        "no calls in the reply: the loop ends",
        "回复里没有调用：循环结束",
    ),
    "final_answer:best_effort": (
        "loop",
        "the iteration limit was reached: one last request without tools gave a best-effort answer",
        "达到轮数上限：最后一次不带工具的请求给出了尽力而为的回答",
    ),
    "final_answer:cut": (
        "protocol",
        'the reply stopped at the token limit (finish_reason "length"): it is the answer, but '
        "its end may be missing; a larger --max-tokens lets the model finish",
        "回复在 token 上限处被截断（finish_reason 为 length）：它仍是回答，但结尾可能缺失；"
        "调大 --max-tokens 让模型说完",
    ),
    "limit_reached:iterations": (
        "loop",
        "the iteration limit was reached: the loop stops, so a model that never answers "
        "cannot run forever",
        "达到轮数上限：循环停止，避免模型无休止地调用下去",
    ),
    "limit_reached:timeout": (
        "loop",
        "the run's time limit passed: the loop stops",
        "超过运行时间上限：循环停止",
    ),
    "model_failed": (
        "protocol",
        "no usable reply came from the model: the run stops",
        "模型没有给出可用的回复：运行停止",
    ),
}

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def language_of(question: str) -> Lang:
    """Chinese when the question holds a CJK ideograph, else English."""
    return "zh" if _CJK.search(question) else "en"


@dataclass(frozen=True)
class Note:
    about: str
    """The event kind it explains."""
    layer: Layer
    text: str
    lang: Lang

    def line(self) -> str:
        layer = CHINESE_LAYERS[self.layer] if self.lang == "zh" else self.layer
        return f"explain · {layer}: {self.text}"

    def record(self) -> dict[str, Any]:
        return {"kind": "explain", "about": self.about, "layer": self.layer, "note": self.text}


def _key(event: Event) -> str:
    if isinstance(event, ToolFinished):
        result = event.result
        if result.cached:
            return "tool_finished:reused"
        if result.ok:
            return "tool_finished:ok"
        kind = f"tool_finished:{result.error_kind}"
        return kind if kind in NOTES else "tool_finished:error"
    if isinstance(event, FinalAnswer) and event.best_effort:
        return "final_answer:best_effort"
    if isinstance(event, FinalAnswer) and event.cut:
        return "final_answer:cut"
    if isinstance(event, GroundingChecked) and event.action == "nudged":
        return "grounding_checked:answer"
    if isinstance(event, LimitReached):
        return f"limit_reached:{event.limit}"
    return event.kind


def note_for(event: Event, lang: Lang) -> Note | None:
    """The note after `event`, or None for events that need none (deltas, notices, ...)."""
    found = NOTES.get(_key(event))
    if found is None:
        return None
    layer, english, chinese = found
    return Note(event.kind, layer, chinese if lang == "zh" else english, lang)


class Explaining:
    """A renderer that shows each event, then its note. `lang` None: the question's language."""

    def __init__(self, inner: Renderer, lang: Lang | None = None) -> None:
        self._inner = inner
        self._fixed = lang
        self._lang: Lang = lang or "en"

    def handle(self, event: Event) -> None:
        self._inner.handle(event)
        if isinstance(event, RunStarted) and self._fixed is None:
            self._lang = language_of(event.question)
        note = note_for(event, self._lang)
        if note is None:
            return
        if isinstance(self._inner, JsonLinesRenderer):
            self._inner.record(note.record())
        else:
            self._inner.handle(Notice(message=note.line()))

    def close(self) -> None:
        self._inner.close()

    def suspended(self) -> AbstractContextManager[None]:
        return self._inner.suspended()


@dataclass(frozen=True)
class Explain:
    """--explain and --lang: whether runs are shown with notes, and in which language (None:
    each question's own)."""

    on: bool = False
    lang: Lang | None = None

    def wrap(self, renderer: Renderer) -> Renderer:
        """The renderer, with notes when asked for (--quiet promises the answer alone, so it
        gets none)."""
        if not self.on or isinstance(renderer, QuietRenderer):
            return renderer
        return Explaining(renderer, self.lang)
