"""--step at the terminal: at each of the loop's pauses Enter goes on, `e` edits the call's
arguments, `s` skips the call (the model reads "skipped by the user"), `q` stops the run."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import typer

from toolcall_cli.events import StepPaused
from toolcall_cli.history import preview
from toolcall_cli.messages import ToolCall
from toolcall_cli.render.base import compact_json, visible
from toolcall_cli.render.explain import Lang, language_of
from toolcall_cli.rounds import Edited, StepAction
from toolcall_cli.wire.tokens import request_tokens

if TYPE_CHECKING:
    from prompt_toolkit.input import Input
    from prompt_toolkit.output import Output

Ask = Callable[[str, str], "str | None"]
"""Asks with a prompt and a prefilled text; the line typed, or None at Ctrl-D."""
Say = Callable[[str], None]

LAST_MESSAGE_CHARS = 300
"""How much of the request's last message the pause shows: enough to see what is asked."""
ARGUMENTS_CHARS = 600

WORDS: dict[Lang, dict[str, str]] = {
    "en": {
        "request": "step: model request {iteration}: {messages} message(s){offered}, "
        "{size:,} chars (about {tokens:,} tokens)",
        "offered": ", {tools} tool spec(s)",
        "last": "  last message ({role}): {text}",
        "call": "step: about to run {name} {arguments}  (call {id})",
        "tool choices": "  [Enter] run it / [e] edit its arguments / [s] skip it / "
        "[q] stop the run",
        "request choices": "  [Enter] send it / [q] stop the run",
        "not a choice": "  Please press Enter, or type one of the letters shown",
        "not run": "  not run: {problem}",
        "edit again": "  Edit again (Ctrl-D: back to the choices)",
        "unchanged": "  unchanged: back to the choices",
        "not json": "that is not JSON ({message} at column {column})",
        "not an object": 'the arguments must be a JSON object, like {{"city": "Paris"}}',
    },
    "zh": {
        "request": "单步：第 {iteration} 次模型请求：{messages} 条消息{offered}，"
        "{size:,} 个字符（约 {tokens:,} 个 token）",
        "offered": "，{tools} 个工具定义",
        "last": "  最后一条消息（{role}）：{text}",
        "call": "单步：即将运行 {name} {arguments}  （调用 {id}）",
        "tool choices": "  [Enter] 运行 / [e] 编辑参数 / [s] 跳过这次调用 / [q] 停止运行",
        "request choices": "  [Enter] 发送 / [q] 停止运行",
        "not a choice": "  请按 Enter，或输入上面列出的一个字母",
        "not run": "  未运行：{problem}",
        "edit again": "  请重新编辑（Ctrl-D：回到选项）",
        "unchanged": "  没有修改：回到选项",
        "not json": "这不是 JSON（第 {column} 列：{message}）",
        "not an object": '参数必须是一个 JSON 对象，例如 {{"city": "Paris"}}',
    },
}
"""What the pauses say, in the language --lang chooses (else the question's), as --explain."""

TOOL_CHOICES = WORDS["en"]["tool choices"]


def ask_line(
    message: str, default: str, *, pt_input: Input | None = None, pt_output: Output | None = None
) -> str | None:
    """A prompt-toolkit line, prefilled, on stderr (stdout may be the --json or plain output);
    None at Ctrl-D. Ctrl-C interrupts the run, as anywhere else."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.output import create_output

    leave = KeyBindings()

    @leave.add("c-d")
    def _leave(event: Any) -> None:
        # prompt-toolkit ends the input at Ctrl-D only on an empty line; this line is often
        # prefilled (the arguments to edit), and the prompt says Ctrl-D goes back.
        event.app.exit(exception=EOFError)

    session: PromptSession[str] = PromptSession(
        input=pt_input,
        output=pt_output or create_output(stdout=sys.stderr),
        key_bindings=leave,
    )
    try:
        return session.prompt(message, default=default)
    except EOFError:
        return None


def _say_on_terminal(text: str) -> None:
    typer.echo(text, err=True)


def request_preview(iteration: int, body: dict[str, Any], lang: Lang = "en") -> str:
    """What the model is about to be sent: how much, and the message it answers."""
    words = WORDS[lang]
    messages = body.get("messages") or []
    tools = body.get("tools") or []
    size = len(json.dumps(body, ensure_ascii=False, default=str))
    # A text strategy lists its tools in the system prompt: no `tools` key to count then.
    offered = words["offered"].format(tools=len(tools)) if tools else ""
    lines = [
        words["request"].format(
            iteration=iteration,
            messages=len(messages),
            offered=offered,
            size=size,
            tokens=request_tokens(body),
        )
    ]
    if messages and isinstance(messages[-1], dict):
        last = messages[-1]
        text = visible(preview(_text_of(last), LAST_MESSAGE_CHARS))
        lines.append(words["last"].format(role=visible(str(last.get("role", "?"))), text=text))
    return "\n".join(lines)


def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else compact_json(content)


def call_preview(call: ToolCall, lang: Lang = "en") -> str:
    args = visible(preview(compact_json(call.arguments), ARGUMENTS_CHARS))
    return WORDS[lang]["call"].format(name=visible(call.name), arguments=args, id=visible(call.id))


class TerminalStepper:
    """Answers the run's StepPaused at the terminal, in `lang` (None: the question's)."""

    def __init__(
        self, ask: Ask = ask_line, say: Say = _say_on_terminal, lang: Lang | None = None
    ) -> None:
        self._ask = ask
        self._say = say
        self._fixed = lang
        self.lang: Lang = lang or "en"

    def answer(self, pause: StepPaused) -> None:
        if pause.before == "request":
            body = pause.request or {}
            if pause.iteration == 1 and self._fixed is None:
                self.lang = language_of(_question_in(body))  # a run's first pause: a new question
            pause.answer(self.before_request(pause.iteration, body))
        elif pause.call is not None:
            pause.answer(self.before_tool(pause.call, pause.problem, pause.draft))

    def before_request(self, iteration: int, body: dict[str, Any]) -> Literal["go", "quit"]:
        self._say(request_preview(iteration, body, self.lang))
        self._say(self._words("request choices"))
        while True:
            answer = self._ask("step> ", "")
            if answer is None or answer.strip().lower() == "q":
                return "quit"
            if not answer.strip():
                return "go"
            self._say(self._words("not a choice"))

    def before_tool(
        self, call: ToolCall, problem: str | None = None, draft: dict[str, Any] | None = None
    ) -> StepAction:
        """The user's choice. `problem`: the arguments they wrote last (`draft`) did not fit
        the tool, so they edit again, or go back to the choices."""
        if problem is not None:
            self._say(self._words("not run", problem=problem))
            self._say(self._words("edit again"))
            text = json.dumps(draft or call.arguments, ensure_ascii=False)
            edited = self._edit(text, known_bad=True)
            if edited is not None:
                return edited
        else:
            self._say(call_preview(call, self.lang))
        self._say(self._words("tool choices"))
        while True:
            answer = self._ask("step> ", "")
            choice = "q" if answer is None else answer.strip().lower()
            if choice == "":
                return "go"
            if choice == "s":
                return "skip"
            if choice == "q":
                return "quit"
            if choice == "e":
                edited = self._edit(json.dumps(call.arguments, ensure_ascii=False))
                if edited is not None:
                    return edited
                self._say(self._words("tool choices"))
                continue
            self._say(self._words("not a choice"))

    def _edit(self, text: str, *, known_bad: bool = False) -> Edited | None:
        """The arguments as the user rewrote them, once they are a JSON object (the loop checks
        them against the tool's schema); None when the user goes back to the choices: Ctrl-D,
        or Enter on the text just refused, unchanged (asking again would only refuse it again,
        for ever)."""
        while True:
            answer = self._ask("arguments> ", text)
            if answer is None:
                return None
            if known_bad and answer.strip() == text.strip():
                self._say(self._words("unchanged"))
                return None
            text = answer
            problem = edit_problem(text, self.lang)
            if problem is None:
                return Edited(json.loads(text))
            known_bad = True
            self._say(self._words("not run", problem=problem))
            self._say(self._words("edit again"))

    def _words(self, key: str, **values: Any) -> str:
        return WORDS[self.lang][key].format(**values)


def _question_in(body: dict[str, Any]) -> str:
    """The question a run's first request carries: its last user message."""
    messages = body.get("messages") or []
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return _text_of(message)
    return ""


def edit_problem(text: str, lang: Lang = "en") -> str | None:
    """Why the edited text cannot be arguments: not JSON, or not an object; None when it can
    (whether they fit the tool's schema, the loop says)."""
    try:
        arguments = json.loads(text)
    except json.JSONDecodeError as error:
        return WORDS[lang]["not json"].format(message=error.msg, column=error.colno)
    if not isinstance(arguments, dict):
        return WORDS[lang]["not an object"].format()
    return None


def stepper(step: bool, lang: Lang | None = None) -> TerminalStepper | None:
    """The stepper --step asks for, speaking `lang` (None: each question's language); a usage
    error in one line when nobody can answer it."""
    if not step:
        return None
    if not sys.stdin.isatty():
        raise NotInteractive
    return TerminalStepper(lang=lang)


class NotInteractive(Exception):
    """--step with stdin that is no terminal: no one could answer at the pauses."""

    MESSAGE = "--step pauses for your answers and needs an interactive terminal on stdin"
