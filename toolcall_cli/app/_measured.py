"""The defaults that help a small model, used where the user chose none, on the servers a small
local model runs on (llama.cpp's llama-server, Ollama): on a llama.cpp server, the strategy the
bench measured best for it (when none is chosen), and on either, whichever strategy runs,
temperature 0, a `max_tokens` sized to the context window, and retrieval of the tools that fit
the question once the list is long."""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass

from toolcall_cli.app.options import SchemaMode, one_of
from toolcall_cli.config import BUILTIN_PROFILES
from toolcall_cli.models.base import Model, server_kind_of
from toolcall_cli.request_tools import Retrieval
from toolcall_cli.wire import ContextWindow, Sampling


@dataclass(frozen=True)
class LocalServer:
    """A server a small local model runs on, as these defaults know it."""

    named: str
    """How the view names it: "a llama.cpp server"."""
    temperature: float
    """What it samples at when a request sets no temperature."""
    strategy_measured: bool
    """The bench measured the best strategy on it (JSON-schema output on llama-server); on
    another, the strategy stays the one chosen, or the default."""

    def defaults(self) -> str:
        """How the view's lines about these defaults begin."""
        return f"defaults for a small model ({self.named})"


SMALL_MODEL_SERVERS = {
    "llama.cpp": LocalServer("a llama.cpp server", 0.8, strategy_measured=True),
    # Its OpenAI-compatible endpoint sends the model temperature 1 (OpenAI's default) when a
    # request sets none, whatever the model file says. The sampling and retrieval defaults were
    # measured with Qwen2.5-0.5B, a model Ollama serves as `qwen2.5:0.5b`: they are about the
    # model, which a server does not change.
    "Ollama": LocalServer("an Ollama server", 1.0, strategy_measured=False),
}
"""The servers whose models get these defaults, by the kind the server's probe answer shows
(models.base.server_kind_of). Any other server (vLLM, LM Studio, a hosted API) says nothing
that tells a small model from a large one, and gets none of them."""

MEASURED_RETRIEVE = 3
"""Tools a request carries on a small model's server when the user set no --retrieve and the list is
long (MEASURED_RETRIEVE_FROM): the two ranked best for the question, and search_tools for the
others. Measured with Qwen2.5-0.5B on llama-server, 30 questions and 7 tools, two passes with the
same seeds: 33 of 60 right against 28 with every tool sent; the gains were the questions where
the model had picked a wrong tool (get_weather for a country's population).
bench/results/realmodel_default_variants.md."""

MEASURED_RETRIEVE_FROM = 10
"""Retrieval comes on by default only from this many tools: under it, leaving tools out hides
one the question needs (issue 24: with 3 of the 4 bundled tools a request, "Is it warmer in
Tokyo or London today?" went to search_tools, found convert_units, and converted 100 miles to
feet), and a short list costs a small model little to read."""

MEASURED_TEMPERATURE = 0.0
"""The temperature sent to a small model's server when the user set none (llama-server samples at
0.8 when told nothing, Ollama at 1). Measured with Qwen2.5-0.5B on the same 30 questions, two
passes: 34 of 60 right at 0 against 28 at the server's 0.8, in fewer iterations (2.5 against
3.1): a tool call's name and arguments have one right spelling, and sampling away from it only
costs. bench/results/realmodel_default_variants.md; with --retrieve 3 as well, 40 of 60
(bench/results/realmodel_30questions.md). Issue 24 saw the same for `--strategy regex`: 12 of 24
right at 0 against 9 at 0.8, on questions nobody tuned for."""

REPLY_SHARE = 4
"""max_tokens is a quarter of the context window: the other three quarters stay for the
request (the fitter keeps exactly max_tokens free for the reply), and a quarter of a small
model's usual 4,096 tokens (1,024) holds any call or answer it gives."""

MAX_REPLY_TOKENS = 2048
"""The most max_tokens a window's quarter gives: a reply of a small model on a CPU, at some 20
tokens a second, then ends within the default 120 s read timeout, however large the window."""

UNKNOWN_WINDOW_REPLY_TOKENS = 1024
"""max_tokens when the window is unknown: a quarter of a 4,096-token window, the smallest a
small model is commonly served with, so the request keeps room even there."""


def small_model_server(model: Model) -> LocalServer | None:
    """The server a small local model runs on that stands behind the model (llama.cpp, known by
    its /props answer; Ollama, by its /api/show answer), or None."""
    kind = server_kind_of(model)
    return SMALL_MODEL_SERVERS.get(kind) if kind is not None else None


def measured_strategy() -> tuple[str, SchemaMode]:
    """The strategy and schema mode measured best for a llama.cpp server (the llamacpp
    profile's)."""
    profile = BUILTIN_PROFILES["llamacpp"]
    mode = profile.schema_mode or "tools"
    assert one_of(SchemaMode, mode)  # a built-in profile's
    return profile.strategy or "regex", typing.cast(SchemaMode, mode)


def server_schema_mode(model: Model) -> SchemaMode:
    """The schema mode a model's server gives schema when nobody chose one: the measured one on
    a server it was measured on (json on llama.cpp), else tools."""
    server = small_model_server(model)
    return measured_strategy()[1] if server is not None and server.strategy_measured else "tools"


def strategy_note(strategy: str, mode: SchemaMode) -> str:
    """The line that says which strategy a llama.cpp server got when the user chose none
    (bench/RESULTS.md: with a small local model, JSON-schema output answered far more questions
    right than the text protocol, which is the default elsewhere)."""
    return (
        f"llama.cpp server: strategy {strategy} with --schema-mode {mode}, the measured "
        "default for it (bench/RESULTS.md); --strategy chooses another"
    )


def default_max_tokens(window: ContextWindow | None) -> tuple[int, str]:
    """The max_tokens a small model gets when nobody chose one, and why, in the view's words."""
    if window is None:
        return UNKNOWN_WINDOW_REPLY_TOKENS, "the context window is unknown"
    share = max(window.tokens // REPLY_SHARE, 1)
    why = f"a quarter of the {window.tokens:,}-token window"
    if share > MAX_REPLY_TOKENS:
        return MAX_REPLY_TOKENS, f"{why}, at most {MAX_REPLY_TOKENS:,}"
    return share, why


def small_model_sampling(
    sampling: Sampling, window: ContextWindow | None, server: LocalServer
) -> tuple[Sampling, str | None]:
    """The session's sampling with temperature 0 and a max_tokens sized to `window`, each where
    nobody chose one (flag, environment, config or profile); and the line that says what was
    applied, None when nothing was."""
    said: list[str] = []
    flags: list[str] = []
    if sampling.temperature is None:
        sampling = dataclasses.replace(sampling, temperature=MEASURED_TEMPERATURE)
        own = f"the server's own is {server.temperature:g}"
        said.append(f"temperature {MEASURED_TEMPERATURE:g} ({own})")
        flags.append("--temperature")
    if sampling.max_tokens is None:
        tokens, why = default_max_tokens(window)
        sampling = dataclasses.replace(sampling, max_tokens=tokens)
        said.append(f"max_tokens {tokens} ({why})")
        flags.append("--max-tokens")
    if not said:
        return sampling, None
    choose = " and ".join(flags) + (" choose others" if len(flags) > 1 else " chooses another")
    return sampling, f"{server.defaults()}: {', '.join(said)}; {choose}"


def small_model_retrieves(retrieval: Retrieval, over_given: bool, tools: int) -> bool:
    """Whether retrieval comes on for a small model: never when --retrieve was chosen (it does
    what it says), and never under MEASURED_RETRIEVE_FROM tools unless --retrieve-over (given
    anywhere) says when."""
    if retrieval.k is not None:
        return False
    return tools > retrieval.over if over_given else tools >= MEASURED_RETRIEVE_FROM


def small_model_retrieval(
    retrieval: Retrieval, over_given: bool, tools: int, server: LocalServer
) -> tuple[Retrieval, str | None]:
    """The session's retrieval for `tools` registered tools: at most MEASURED_RETRIEVE tools a
    request where small_model_retrieves says so; and the line that says it."""
    if not small_model_retrieves(retrieval, over_given, tools):
        return retrieval, None
    k = MEASURED_RETRIEVE
    when = f"from {MEASURED_RETRIEVE_FROM} tools up"
    if over_given:
        when = f"past --retrieve-over {retrieval.over}"
    note = (
        f"{server.defaults()}: each request carries at most {k} of the {tools} tools, the "
        f"{k - 1} ranked best for the question and search_tools for the others (--retrieve {k}, "
        f"{when}); --retrieve 0 sends every tool"
    )
    return dataclasses.replace(retrieval, k=k), note
