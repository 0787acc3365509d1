"""The strategies `prompt --all` and `compare` set side by side, each named by the flags that
choose it for `run` (`schema json` is `--strategy schema --schema-mode json`)."""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass
from typing import Any

from toolcall_cli.app.options import SchemaMode, SessionOptions, StrategyName, StreamMode
from toolcall_cli.events import strategy_label as labelled


@dataclass(frozen=True)
class Variant:
    """One strategy in one mode."""

    strategy: StrategyName
    schema_mode: SchemaMode | None = None
    """Set for schema only."""
    stream_mode: StreamMode | None = None
    """Set for stream only."""

    @property
    def label(self) -> str:
        return strategy_label(self.strategy, self.schema_mode, self.stream_mode)

    def record(self) -> dict[str, Any]:
        """The variant as `--json` gives it: its label, then its fields."""
        return {"label": self.label, **dataclasses.asdict(self)}

    def options(self, options: SessionOptions) -> SessionOptions:
        """`options` with this variant's strategy and modes; the rest (prompt style, --dag) as
        given."""
        return options.replace(
            strategy=self.strategy,
            schema_mode=self.schema_mode or "tools",
            stream_mode=self.stream_mode or options.strategy.stream_mode,
        )


def strategy_label(name: str, schema_mode: Any, stream_mode: Any) -> str:
    """`schema tools`, `stream native`, `regex`: a strategy named as compare names it, with the
    mode of its own kind where it has one (a trace's header records both modes)."""
    return labelled(name, {"schema": schema_mode, "stream": stream_mode}.get(name) or "")


def all_variants(stream_mode: StreamMode) -> tuple[Variant, ...]:
    """regex, schema in each of its modes, and stream in the mode `--stream-mode` chose."""
    return (
        Variant("regex"),
        *(Variant("schema", schema_mode=mode) for mode in typing.get_args(SchemaMode)),
        Variant("stream", stream_mode=stream_mode),
    )
