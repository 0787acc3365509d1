"""A chat as the tests drive it: prompt-toolkit reading a pipe, plain output."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prompt_toolkit.input import PipeInput
from prompt_toolkit.output import DummyOutput

from toolcall_cli.app._model_choice import ModelChoice, get_model
from toolcall_cli.repl import Repl
from toolcall_cli.session import Session


def piped_chat(session: Session, pipe: PipeInput, tmp_path: Path, **more: Any) -> Repl:
    """A plain-mode chat on `session` that reads `pipe`; `/model NAME` puts in the model a bare
    choice of that name makes; `more` goes to Repl (trace, reloader, watch, a history_file of
    the test's own, the use_model of a session the CLI's way built)."""
    more.setdefault("history_file", tmp_path / "history")
    more.setdefault("use_model", lambda name: session.use_model(get_model(ModelChoice(name=name))))
    return Repl(
        session,
        pt_input=pipe,
        pt_output=DummyOutput(),
        mode="plain",
        **more,
    )
