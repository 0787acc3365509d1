"""`toolcall chat`, driven as a person would: keystrokes through prompt-toolkit's pipe input."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from piped_chat import piped_chat
from prompt_toolkit.input import create_pipe_input

from toolcall_cli.loop import Limits
from toolcall_cli.offline import OfflineModel
from toolcall_cli.session import Session
from toolcall_cli.strategies import get_strategy
from toolcall_cli.tools.loader import bundled_tools_dir, load_tools
from toolcall_cli.wire import ModelRequest


def new_session(model: Any = None, limits: Limits | None = None) -> Session:
    registry = load_tools([bundled_tools_dir()]).registry
    return Session(
        model=model or OfflineModel(),
        strategy=get_strategy("regex"),
        registry=registry,
        limits=limits or Limits(),
    )


def drive(session: Session, keys: str, tmp_path: Path, history_file: Path | None = None) -> int:
    with create_pipe_input() as pipe:
        pipe.send_text(keys)
        return piped_chat(
            session, pipe, tmp_path, history_file=history_file or tmp_path / "history"
        ).loop()


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
    # A lowered limit: typing 9,000 characters through the terminal emulation takes seconds.
    session = new_session(limits=Limits(max_question_chars=50))
    assert drive(session, "x" * 60 + "\rWhat's 2+2?\r\x04", tmp_path) == 0
    out = capsys.readouterr().out
    assert "the question is 60 characters; the limit is 50" in out
    assert "answer: 2+2 = 4" in out
    assert session.history[0].content == "What's 2+2?"


def test_strategy_without_a_name_shows_the_current_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = new_session()
    assert drive(session, "/strategy\r/strategy schema\r/strategy   \r\x04", tmp_path) == 0
    out = capsys.readouterr().out
    assert out.count("The strategy is regex. /strategy NAME switches it") == 1
    assert out.count("The strategy is schema. /strategy NAME switches it") == 1
    assert "unknown strategy" not in out
    assert session.strategy.name == "schema"


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The loosest umask there is, so only toolcall's own care keeps a file private."""
    old = os.umask(0)
    yield
    os.umask(old)


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.usefixtures("open_umask")
def test_the_history_file_is_created_owner_only(tmp_path: Path) -> None:
    history = tmp_path / "history"
    assert drive(new_session(), "What's 2+2?\r\x04", tmp_path, history) == 0
    assert "What's 2+2?" in history.read_text(encoding="utf-8")
    assert mode_of(history) == 0o600


@pytest.mark.usefixtures("open_umask")
def test_an_existing_history_file_readable_by_others_is_tightened(tmp_path: Path) -> None:
    history = tmp_path / "history"
    history.write_text("\n# 2024-01-01 00:00:00\n+an old question\n", encoding="utf-8")
    history.chmod(0o664)
    assert drive(new_session(), "What's 2+2?\r\x04", tmp_path, history) == 0
    assert mode_of(history) == 0o600
    text = history.read_text(encoding="utf-8")
    assert "an old question" in text and "What's 2+2?" in text


@pytest.mark.usefixtures("open_umask")
def test_the_default_history_file_gets_its_own_private_directory() -> None:
    from toolcall_cli.repl import default_history_file

    path = default_history_file()  # HOME is a fresh directory for each test (conftest)
    assert path.parent.is_dir() and mode_of(path.parent) == 0o700
    assert not path.exists()  # the file itself is made when the chat opens it


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_history_file_that_stops_taking_writes_is_one_warning_and_the_chat_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """/dev/full opens like a file and fails every write, as a full disk does mid-session."""
    session = new_session()
    keys = "What's 2+2?\rWhat's 3+3?\r\x04"
    assert drive(session, keys, tmp_path, Path("/dev/full")) == 0
    captured = capsys.readouterr()
    assert "answer: 2+2 = 4" in captured.out and "answer: 3+3 = 6" in captured.out
    assert captured.err == (
        "toolcall: warning: cannot write the history file /dev/full: No space left on device; "
        "this session's input is not kept\n"
    )


def test_up_recalls_the_last_question_of_a_history_cut_to_its_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the end of a long history file is read; what is read is prompt-toolkit's format."""
    import toolcall_cli.repl

    history = tmp_path / "history"
    old = "".join(f"\n# 2024-01-01 00:00:{i:02}\n+What's {i}+{i}?\n" for i in range(50))
    history.write_text(old + "\n# 2024-01-02 00:00:00\n+What's 3+4?\n", encoding="utf-8")
    monkeypatch.setattr(toolcall_cli.repl, "HISTORY_READ_LIMIT", 100)
    assert drive(new_session(), "\x1b[A\x1b[A\r\x04", tmp_path, history) == 0
    out = capsys.readouterr().out
    # two entries back from the end, and nothing from the cut-off part before them
    assert "question: What's 49+49?" in out and "answer: 49+49 = 98" in out


def test_strategy_switching_keeps_the_session_s_modes() -> None:
    from toolcall_cli.offline import OfflineModel
    from toolcall_cli.session import Session
    from toolcall_cli.strategies import get_strategy
    from toolcall_cli.tools.registry import ToolRegistry

    settings = {"schema_mode": "json", "stream_mode": "native", "dag": True}
    session = Session(
        model=OfflineModel(),
        strategy=get_strategy("regex", **settings),  # type: ignore[arg-type]
        registry=ToolRegistry(),
        strategy_settings=settings,
    )
    session.use_strategy("stream")
    assert getattr(session.strategy, "mode", None) == "native"
    assert getattr(session.strategy, "dag", None) is True
    session.use_strategy("schema")
    assert getattr(session.strategy, "mode", None) == "json"
