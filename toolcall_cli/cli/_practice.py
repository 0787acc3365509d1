"""`toolcall serve` and `toolcall eject`: a model that misbehaves on demand, and the loop to
practise against it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolcall_cli.app.options import LocalModel, StrategyName
from toolcall_cli.cli._options import PanelledCommand, Without, choices_metavar, with_groups
from toolcall_cli.cli.entry import EXIT_FAILURE, EXIT_USAGE, app, fail

DEFAULT_PORT = 8765
"""Clear of the ports local model servers take (vLLM 8000, llama-server 8080, Ollama 11434)."""


PortOpt = Annotated[
    int,
    typer.Option(
        "--port", min=0, max=65535, metavar="PORT", help="The port (0: any free one, printed)."
    ),
]
HostOpt = Annotated[
    str,
    typer.Option(
        "--host", metavar="HOST", help="The address to listen on (default: this machine only)."
    ),
]
ServeSeedOpt = Annotated[
    int,
    typer.Option(
        "--seed",
        metavar="N",
        help="Seeds the offline model's choices and faults (a request's own `seed` wins).",
    ),
]


@app.command(cls=PanelledCommand)
@with_groups
def serve(
    *,
    port: PortOpt = DEFAULT_PORT,
    host: HostOpt = "127.0.0.1",
    local: Annotated[LocalModel, Without("script", "pace")],
    seed: ServeSeedOpt = 0,
) -> None:
    """Serve the offline model, faults included, as an OpenAI-compatible HTTP server: POST
    /v1/chat/completions (streamed or not; tools, tool_choice, response_format) and GET
    /v1/models. Each exchange is logged here. Ctrl-C stops it."""
    from toolcall_cli.cli._running import pipe_console
    from toolcall_cli.cli._serving import ServeError
    from toolcall_cli.cli._serving import serve as serve_forever
    from toolcall_cli.serve import ServeSettings

    settings = ServeSettings(seed=seed, faults=local.fault_names, fault_rate=local.fault_rate)
    try:
        serve_forever(settings, host, port, pipe_console())
    except ServeError as error:
        fail(str(error), EXIT_USAGE if error.usage else EXIT_FAILURE)


@app.command(cls=PanelledCommand)
def eject(
    strategy: Annotated[
        StrategyName,
        typer.Option(
            "--strategy",
            "-s",
            metavar=choices_metavar(StrategyName),
            help="Which loop: regex (default), schema, stream.",
        ),
    ] = "regex",
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", metavar="FILE", help="Write it to this new file instead."),
    ] = None,
) -> None:
    """Print the whiteboard answer: a minimal standalone tool-use loop for a strategy (at most 90
    lines, the standard library and httpx) that runs against `toolcall serve` or any
    OpenAI-compatible endpoint."""
    from toolcall_cli.eject import program

    source = program(strategy)
    if output is None:
        typer.echo(source, nl=False)
        return
    try:
        with output.open("x", encoding="utf-8") as file:  # never over a file of one's own
            file.write(source)
    except FileExistsError:
        fail(f"{output} already exists; choose another name or remove it first")
    except OSError as error:
        fail(f"cannot write {output}: {error.strerror or error}")
    typer.echo(f"wrote {output} ({strategy}, {source.count(chr(10))} lines)", err=True)
