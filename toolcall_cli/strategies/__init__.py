"""Ways of doing tool use: how tools go on the wire and how calls come back.

Public here: `get_strategy`, `STRATEGY_NAMES`, `UnknownStrategy`, and the modules `base` (the
Strategy protocol), `text_protocol`, `text_prompt`, `text_parser`, `schema`, `content_calls`,
`echo` and `replies`. Private: `_stream`, `_native`, `_repair`, `_dependencies`, `_own_prompt`
(reached through `get_strategy`)."""

from __future__ import annotations

from typing import Any

from toolcall_cli.strategies.base import Strategy
from toolcall_cli.strategies.text_prompt import PROMPT_STYLES
from toolcall_cli.wire import NO_SAMPLING, Sampling

STRATEGY_NAMES = ("regex", "schema", "stream")


class UnknownStrategy(ValueError):
    pass


def get_strategy(
    name: str,
    *,
    schema_mode: str = "tools",
    stream_mode: str = "tags",
    dag: bool = False,
    prompt_style: str = "full",
    sampling: Sampling = NO_SAMPLING,
    system_prompt: str | None = None,
) -> Strategy:
    """The strategy called `name`; raises UnknownStrategy with the valid names.

    `schema_mode` is "tools" (native function calling), "json" (structured output) or
    "required" (native, `tool_choice: "required"`, the answer given through a final_answer
    tool); `stream_mode` is "tags" (text protocol) or "native" (tool_calls deltas); `dag` offers
    the model a way to make one call wait for another and use its result; `prompt_style` is how
    much the system prompt says; `sampling` goes into every request; `system_prompt` replaces
    the strategy's own system prompt (--system-prompt).
    """
    if prompt_style not in PROMPT_STYLES:
        raise UnknownStrategy(
            f"unknown prompt style {prompt_style!r}; choose one of {', '.join(PROMPT_STYLES)}"
        )
    if name not in STRATEGY_NAMES:
        raise UnknownStrategy(
            f"unknown strategy {name!r}; choose one of {', '.join(STRATEGY_NAMES)}"
        )
    shared: dict[str, Any] = {"dag": dag, "prompt_style": prompt_style, "sampling": sampling}
    strategy = _named_strategy(name, schema_mode=schema_mode, stream_mode=stream_mode, **shared)
    if system_prompt is None:
        return strategy
    from toolcall_cli.strategies._own_prompt import OwnSystemPrompt

    return OwnSystemPrompt(strategy, system_prompt)


def _named_strategy(name: str, *, schema_mode: str, stream_mode: str, **shared: Any) -> Strategy:
    # Each strategy is imported only when chosen: a run needs one of the three.
    if name == "regex":
        from toolcall_cli.strategies.text_protocol import TextProtocolStrategy

        return TextProtocolStrategy(**shared)
    if name == "stream" and stream_mode in ("tags", "native"):
        from toolcall_cli.strategies._stream import StreamStrategy

        return StreamStrategy("native" if stream_mode == "native" else "tags", **shared)
    from toolcall_cli.strategies.schema import SCHEMA_MODES, SchemaStrategy

    if name == "schema" and schema_mode in SCHEMA_MODES:
        return SchemaStrategy(schema_mode, **shared)
    raise UnknownStrategy(
        f"unknown mode for {name}: schema takes --schema-mode {'|'.join(SCHEMA_MODES)}, "
        "stream takes --stream-mode tags|native"
    )
