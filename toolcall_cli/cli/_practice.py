"""`toolcall serve` and `toolcall eject`: a model that misbehaves on demand, and the loop to
practise against it."""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Annotated

import typer

from toolcall_cli.app.options import LocalModel, StrategyName
from toolcall_cli.cli._options import PanelledCommand, Without, choices_metavar, with_groups
from toolcall_cli.cli.entry import EXIT_FAILURE, app, fail
from toolcall_cli.termination import Terminated

DEFAULT_PORT = 8765
"""Clear of the ports local model servers take (vLLM 8000, llama-server 8080, Ollama 11434)."""
POLL_SECONDS = 0.2
"""How often the server loop looks for a shutdown request (the log's reader gone)."""


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
    /v1/models. Each exchange is logged here. Ctrl-C (or SIGTERM) stops it, exit 0."""
    from toolcall_cli.cli._running import pipe_console
    from toolcall_cli.render.serve_log import ServeLog, banner
    from toolcall_cli.serve import Answerer, ServeServer, ServeSettings, host_note

    settings = ServeSettings(seed=seed, faults=local.fault_names, fault_rate=local.fault_rate)
    try:
        answerer = Answerer(settings)
    except ValueError as error:  # UnknownFault, or a rate outside 0..1
        fail(str(error))
    log = ServeLog(pipe_console())
    try:
        server = ServeServer((host, port), answerer, log.exchange)
    except OSError as error:
        fail(f"cannot listen on {host}:{port}: {error.strerror or error}", EXIT_FAILURE)
    # The log's reader gone (`toolcall serve | head`): stop serving, as any command stops then.
    log.on_closed = lambda: threading.Thread(target=server.shutdown, daemon=True).start()
    try:
        log.show(banner(server.url, settings, host_note(host)))
        server.serve_forever(poll_interval=POLL_SECONDS)
    except KeyboardInterrupt:
        log.show("stopped (Ctrl-C)")
    except Terminated as stop:
        # SIGTERM is how systemd, docker and kubernetes stop a server: its normal end, exit 0
        # as uvicorn's and gunicorn's, not a failure to restart it for. SIGHUP (the terminal
        # it was started from closed) keeps its 129.
        if stop.signal != signal.SIGTERM:
            raise
        log.show("stopped (SIGTERM)")
    finally:
        server.server_close()
    if log.closed:
        raise BrokenPipeError  # the reader of the log went away


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
