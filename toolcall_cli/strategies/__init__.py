"""Ways of doing tool use: how tools go on the wire and how calls come back."""

from __future__ import annotations

from toolcall_cli.strategies.base import Strategy

STRATEGY_NAMES = ("regex", "schema", "stream")


class UnknownStrategy(ValueError):
    pass


def get_strategy(
    name: str, *, schema_mode: str = "tools", stream_mode: str = "tags", dag: bool = False
) -> Strategy:
    """The strategy called `name`; raises UnknownStrategy with the valid names.

    `schema_mode` is "tools" (native function calling) or "json" (structured output);
    `stream_mode` is "tags" (text protocol) or "native" (tool_calls deltas); `dag` offers the
    model a way to make one call wait for another and use its result.
    """
    from toolcall_cli.strategies.schema import SchemaStrategy
    from toolcall_cli.strategies.stream import StreamStrategy
    from toolcall_cli.strategies.text_protocol import TextProtocolStrategy

    if name == "regex":
        return TextProtocolStrategy(dag=dag)
    if name == "stream" and stream_mode in ("tags", "native"):
        return StreamStrategy("native" if stream_mode == "native" else "tags", dag=dag)
    if name == "schema" and schema_mode in ("tools", "json"):
        return SchemaStrategy("json" if schema_mode == "json" else "tools", dag=dag)
    if name in STRATEGY_NAMES:
        raise UnknownStrategy(
            f"unknown mode for {name}: schema takes --schema-mode tools|json, "
            "stream takes --stream-mode tags|native"
        )
    raise UnknownStrategy(f"unknown strategy {name!r}; choose one of {', '.join(STRATEGY_NAMES)}")
