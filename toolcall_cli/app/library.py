"""toolcall from plain Python: one question run with the session the command line would build,
its events handed to the caller as they happen.

    import toolcall_cli as toolcall

    def get_weather(city: str) -> dict:
        "The weather in a city now."
        return {"city": city, "temperature_c": 21, "sky": "clear"}

    for event in toolcall.ask("What's the weather in Paris?", tools=[get_weather]):
        print(event.kind)

The same options as the command line's flags, by their field names (`strategy="schema"`,
`base_url=...`, `temperature=0`, `max_iterations=4`, `tools_dir=...` for `--tools DIR`): see
`toolcall run --help`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from toolcall_cli.app.build import build_session
from toolcall_cli.app.options import SessionOptions
from toolcall_cli.events import Event
from toolcall_cli.session import Answers, answered
from toolcall_cli.tools.registry import Tool

log = logging.getLogger("toolcall")


def ask(
    question: str,
    *,
    tools: Sequence[Callable[..., Any]] | None = None,
    tools_dir: str | Path | Sequence[str | Path] = (),
    answers: Answers | None = None,
    step: bool = False,
    **options: Any,
) -> Iterator[Event]:
    """Run `question` to its end and yield every event of the run (`RunFinished` last).

    `tools`: functions to offer (plain typed functions, `@tool` optional); given, they are the
    only tools (neither the bundled ones nor your tools.d directories load), unless `tools_dir`
    names more. `tools_dir`: directories of plugin files, as `--tools DIR` names them (that
    flag's session option is `tools` too, the name the functions have here). `answers`: who
    answers an `ApprovalAsked` or `StepPaused` (an object with `answer(event)`); without one,
    a dangerous tool is declined unless `yes=True`. `step`: pause before each model request
    and each tool (`--step`), for `answers` to answer. Anything else is a session option by its
    flag's field name; a bad one raises `AppError` (or TypeError for a name that is none)."""
    if tools is not None:
        options.setdefault("no_default_tools", True)
    if isinstance(tools_dir, (str, Path)):  # one directory, not the characters of its name
        tools_dir = (tools_dir,)
    if tools_dir:
        options["tools"] = tuple(Path(directory) for directory in tools_dir)
    offered = None if tools is None else [Tool.from_function(f, source="ask()") for f in tools]
    assembled = build_session(
        SessionOptions.of(**options), answers=answers, warn=log.warning, tools=offered
    )
    session = assembled.session
    session.stepping = step
    try:
        yield from answered(session.ask(question), answers)
    finally:
        session.close()
