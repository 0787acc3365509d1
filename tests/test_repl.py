"""`toolcall chat`, driven as a person would: keystrokes through prompt-toolkit's pipe input."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from toolcall_cli.models import ModelChoice, get_model
from toolcall_cli.models.base import ModelRequest
from toolcall_cli.offline import OfflineModel
from toolcall_cli.repl import Repl
from toolcall_cli.session import Session
from toolcall_cli.strategies import get_strategy
from toolcall_cli.tools.loader import bundled_tools_dir, load_tools


def new_session(model: Any = None) -> Session:
    registry = load_tools([bundled_tools_dir()]).registry
    return Session(model=model or OfflineModel(), strategy=get_strategy("regex"), registry=registry)


def drive(session: Session, keys: str, tmp_path: Path) -> int:
    with create_pipe_input() as pipe:
        pipe.send_text(keys)
        repl = Repl(
            session,
            history_file=tmp_path / "history",
            make_model=lambda name: get_model(ModelChoice(name=name)),
            pt_input=pipe,
            pt_output=DummyOutput(),
            mode="plain",
        )
        return repl.loop()


def test_questions_are_answered_and_remembered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = new_session()
    code = drive(session, "What's 12*5+3?\r北京明天天气怎么样？\r/history\r\x04", tmp_path)
    out = capsys.readouterr().out
    assert code == 0
    assert "answer: 12*5+3 = 63" in out
    assert "call get_weather" in out and "北京" in out
    # two questions, each with a call round and an answer: 2 * (user + assistant + tool + assistant)
    assert len(session.history) == 8
    assert "The conversation holds 8 messages." in out
    history = (tmp_path / "history").read_text(encoding="utf-8")
    assert "What's 12*5+3?" in history and "北京明天天气怎么样？" in history


def test_slash_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session = new_session()
    keys = "\r".join(
        [
            "/help",
            "/tools",
            "/strategy stream",
            "/strategy bogus",
            "/model nope",
            "你好",
            "/reset",
            "/history",
            "/exit",
            "",
        ]
    )
    assert drive(session, keys, tmp_path) == 0
    out = capsys.readouterr().out
    assert "/strategy" in out and "/reset" in out  # help
    assert "get_weather" in out and "calculate" in out  # tools
    assert "Strategy is now stream." in out and session.strategy.name == "stream"
    assert "unknown strategy 'bogus'" in out
    assert "model 'nope' needs an endpoint" in out  # the model switch was refused, clearly
    assert session.model.name == "offline"
    assert "Conversation cleared." in out and "The conversation holds 0 messages." in out


class InterruptOnce:
    """A model whose first request is interrupted by Ctrl-C, as a person would press it."""

    name = "offline"

    def __init__(self) -> None:
        self.inner = OfflineModel()
        self.calls = 0

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        self.calls += 1
        if self.calls == 1:
            raise KeyboardInterrupt
        return self.inner.stream(request)


def test_ctrl_c_cancels_the_turn_and_keeps_the_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = new_session(InterruptOnce())
    assert drive(session, "What's 12*5+3?\rWhat's 2+2?\r\x04", tmp_path) == 0
    out = capsys.readouterr().out
    assert "turn cancelled" in out
    assert "answer: 2+2 = 4" in out
    # the cancelled turn left nothing behind: only the second question's four messages
    assert [m.role for m in session.history] == ["user", "assistant", "tool", "assistant"]
    assert session.history[0].content == "What's 2+2?"


def test_completion_of_commands_and_tools(tmp_path: Path) -> None:
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from toolcall_cli.repl import SlashCompleter

    completer = SlashCompleter(new_session())

    def words(text: str) -> list[str]:
        return [c.text for c in completer.get_completions(Document(text), CompleteEvent())]

    assert words("/st") == ["/strategy"]
    assert words("/strategy s") == ["schema", "stream"]
    assert words("please use get_w") == ["get_weather"]


def test_a_question_over_the_limit_is_refused_and_the_session_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = new_session()
    assert drive(session, "x" * 9000 + "\rWhat's 2+2?\r\x04", tmp_path) == 0
    out = capsys.readouterr().out
    assert "the question is 9,000 characters; the limit is 8,000" in out
    assert "answer: 2+2 = 4" in out
    assert session.history[0].content == "What's 2+2?"
