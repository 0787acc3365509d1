"""Answers that need no tool: greetings, thanks, what tool use is, the question back when a
value is missing, and saying so when no tool fits."""

from __future__ import annotations

from collections.abc import Sequence

from toolcall_cli.messages import ToolSpec
from toolcall_cli.offline import _lexicon as lx
from toolcall_cli.offline._conversation import Decision
from toolcall_cli.offline._question import Reading
from toolcall_cli.offline._tools import description_of, properties
from toolcall_cli.offline._words import mentions

_TOPICS: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (
        ("toolcall",),
        "toolcall 是一个终端程序，把大模型的工具调用过程逐步展示出来：发送问题和工具定义、"
        "解析模型发出的调用、校验并运行本地工具、把结果回传给模型，直到模型给出最终回答。",
        "toolcall is a terminal program that shows LLM tool use step by step: it sends the "
        "question and tool definitions, parses the calls the model emits, validates and runs "
        "local tools, feeds the results back, and loops until the model answers.",
    ),
    (
        (
            "tool use",
            "function calling",
            "function call",
            "tool call",
            "工具调用",
            "函数调用",
            "工具使用",
        ),
        "工具调用（tool use / function calling）是指：模型拿到一组工具的名字、描述和参数 schema，"
        "需要时不直接回答，而是输出一个结构化的调用（工具名 + JSON 参数）；程序执行这个工具，"
        "把结果作为消息回传，模型再根据结果继续调用或给出最终回答。模型的输出不可全信，所以每一步都要校验。",
        "Tool use (function calling) means the model is given tools — names, descriptions and "
        "JSON Schema parameters — and, instead of answering directly, emits a structured call "
        "(a tool name plus JSON arguments). The program runs the tool, sends the result back as "
        "a message, and the model either calls again or gives its final answer. A model's output "
        "can't be trusted blindly, so every step is validated.",
    ),
)


def direct_answer(reading: Reading, tools: Sequence[ToolSpec]) -> Decision:
    for phrases, zh, en in _TOPICS:
        if mentions(reading.text, phrases):
            return Decision(text=zh if reading.zh else en)
    if mentions(reading.text, lx.THANKS):
        return Decision(text="不客气！还有什么可以帮你的吗？" if reading.zh else "You're welcome!")
    abilities = ability_list(tools, reading)
    if mentions(reading.text, lx.GREETINGS):
        head = (
            "你好！我可以用这些工具帮你：" if reading.zh else "Hello! I can help with these tools:"
        )
        return Decision(text=f"{head}\n{abilities}" if tools else head.rstrip("：:") + "。")
    if reading.zh:
        head = "这个问题我的工具帮不上忙，我也不想猜。我能做的是："
    else:
        head = "None of my tools fits that question, and I'd rather not guess. They can do this:"
    return Decision(
        text=f"{head}\n{abilities}" if tools else head.split("，")[0].split(",")[0] + "."
    )


def no_currency_tool(reading: Reading, tools: Sequence[ToolSpec]) -> str:
    """Say so rather than misuse a unit converter or a calculator without exchange rates."""
    if reading.zh:
        head = "我的工具都不能换算货币，也查不到汇率，我不想乱猜。"
        return f"{head}我能做的是：\n{ability_list(tools, reading)}" if tools else head
    head = "None of my tools converts currencies or knows exchange rates, and I'd rather not guess."
    return f"{head} They can do this:\n{ability_list(tools, reading)}" if tools else head


def ask_for(spec: ToolSpec, missing: Sequence[str], reading: Reading) -> str:
    """The question back when a tool fits but the question gives none of what it requires."""
    props = properties(spec)
    described: list[str] = []
    for name in missing:
        detail = first_line(description_of(props.get(name, {}))).rstrip(".。 ")
        if not detail:
            described.append(name)
        else:
            described.append(f"{name}（{detail}）" if reading.zh else f"{name} ({detail})")
    if reading.zh:
        return f"我可以用 {spec.name} 来回答，但还需要你告诉我：{'、'.join(described)}。"
    needs = ", ".join(described)
    return f"I can answer that with {spec.name}, but I need the {needs}. Could you tell me?"


def ability_list(tools: Sequence[ToolSpec], reading: Reading) -> str:
    empty = "（无描述）" if reading.zh else "(no description)"
    return "\n".join(f"- {t.name}: {first_line(t.description) or empty}" for t in tools)


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""
