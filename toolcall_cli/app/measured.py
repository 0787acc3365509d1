"""The defaults the bench measured best for a kind of server, used where the user chose none:
for a llama.cpp server, its strategy, temperature 0 and retrieval of the tools that fit."""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass

from toolcall_cli.app.options import SchemaMode, one_of
from toolcall_cli.choosing import Retrieval
from toolcall_cli.config import BUILTIN_PROFILES
from toolcall_cli.models.base import Model, server_kind_of
from toolcall_cli.wire import Sampling

MEASURED_RETRIEVE = 3
"""Tools a request carries on a llama.cpp server when the user set no --retrieve: the two
ranked best for the question, and search_tools for the others. Measured with Qwen2.5-0.5B on 30
questions and 7 tools, two passes with the same seeds: 33 of 60 right against 28 with every
tool sent; the gains were the questions where the model had picked a wrong tool (get_weather
for a country's population). bench/results/realmodel_default_variants.md."""


MEASURED_TEMPERATURE = 0.0
"""The temperature sent to a llama.cpp server when the user set none (llama-server samples at
0.8 when told nothing). Measured with Qwen2.5-0.5B on the same 30 questions, two passes: 34 of
60 right at 0 against 28 at the server's 0.8, in fewer iterations (2.5 against 3.1): a tool
call's name and arguments have one right spelling, and sampling away from it only costs.
bench/results/realmodel_default_variants.md; with --retrieve 3 as well, 40 of 60
(bench/results/realmodel_30questions.md)."""


@dataclass(frozen=True)
class MeasuredDefault:
    """What the bench measured best for a kind of server, used when the user chose nothing."""

    strategy: str
    schema_mode: SchemaMode
    retrieve: int
    temperature: float
    note: str

    def fits(self, strategy: str, schema_mode: SchemaMode | None) -> bool:
        """Whether a session runs the strategy this was measured with (chosen by the user, by
        the llamacpp profile, or by this default), so its temperature and retrieval apply."""
        return strategy == self.strategy and schema_mode == self.schema_mode


def measured_strategy() -> tuple[str, SchemaMode]:
    """The strategy and schema mode measured best for a llama.cpp server (the llamacpp
    profile's)."""
    profile = BUILTIN_PROFILES["llamacpp"]
    mode = profile.schema_mode or "tools"
    assert one_of(SchemaMode, mode)  # a built-in profile's
    return profile.strategy or "regex", typing.cast(SchemaMode, mode)


def measured_default(model: Model) -> MeasuredDefault | None:
    """What the bench measured best for the model's kind of server: for a llama.cpp server the
    built-in profile's strategy (bench/RESULTS.md: with a small local model, JSON-schema output
    answered far more questions right than the text protocol, which is the default elsewhere),
    used when the user chose none; and with that strategy, temperature 0 and retrieval of the
    tools that fit the question, where the user chose no temperature or --retrieve. None for any
    other model or server."""
    if server_kind_of(model) != "llama.cpp":
        return None
    strategy, mode = measured_strategy()
    note = (
        f"llama.cpp server: strategy {strategy} with --schema-mode {mode}, the measured "
        "default for it (bench/RESULTS.md); --strategy chooses another"
    )
    return MeasuredDefault(strategy, mode, MEASURED_RETRIEVE, MEASURED_TEMPERATURE, note)


def measured_sampling(
    sampling: Sampling, measured: MeasuredDefault | None
) -> tuple[Sampling, str | None]:
    """The session's sampling, with the measured default's temperature when nobody chose one;
    and the note that says so."""
    if measured is None or sampling.temperature is not None:
        return sampling, None
    note = (
        f"llama.cpp server: temperature {measured.temperature:g}, the measured default for it "
        "(the server's own is 0.8); --temperature chooses another"
    )
    return dataclasses.replace(sampling, temperature=measured.temperature), note


def measured_retrieval(
    retrieval: Retrieval, measured: MeasuredDefault | None
) -> tuple[Retrieval, str | None]:
    """The session's retrieval, with the measured default's K when nobody chose one; and the
    note that says so."""
    if measured is None or retrieval.k is not None:
        return retrieval, None
    note = (
        f"llama.cpp server: each request carries at most {measured.retrieve} tools, the tools "
        "ranked best for the question and search_tools for the others, the measured default "
        f"for it (--retrieve {measured.retrieve}); --retrieve 0 sends every tool"
    )
    return dataclasses.replace(retrieval, k=measured.retrieve), note
