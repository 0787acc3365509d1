"""`toolcall serve`'s driver: the server of serve/ with the log of render/serve_log.py drawing
each exchange, until Ctrl-C or until the log's reader goes away."""

from __future__ import annotations

import threading

from rich.console import Console

from toolcall_cli.render.serve_log import ServeLog, banner
from toolcall_cli.serve import Answerer, ServeServer, ServeSettings, host_note

POLL_SECONDS = 0.2
"""How often the server loop looks for a shutdown request (the log's reader gone)."""


class ServeError(Exception):
    """The server cannot start. `usage`: the settings are wrong (an unknown fault), rather than
    the machine (the address cannot be listened on)."""

    def __init__(self, message: str, *, usage: bool) -> None:
        super().__init__(message)
        self.usage = usage


def serve(settings: ServeSettings, host: str, port: int, console: Console) -> None:
    """Serve until Ctrl-C. Raises ServeError when the server cannot start, and BrokenPipeError
    when the reader of the log went away."""
    try:
        answerer = Answerer(settings)
    except ValueError as error:  # UnknownFault, or a rate outside 0..1
        raise ServeError(str(error), usage=True) from None
    log = ServeLog(console)
    try:
        server = ServeServer((host, port), answerer, log.exchange)
    except OSError as error:
        reason = error.strerror or str(error)
        raise ServeError(f"cannot listen on {host}:{port}: {reason}", usage=False) from None
    # The log's reader gone (`toolcall serve | head`): stop serving, as any command stops then.
    log.on_closed = lambda: threading.Thread(target=server.shutdown, daemon=True).start()
    try:
        log.show(banner(server.url, settings, host_note(host)))
        server.serve_forever(poll_interval=POLL_SECONDS)
    except KeyboardInterrupt:
        log.show("stopped (Ctrl-C)")
    finally:
        server.server_close()
    if log.closed:
        raise BrokenPipeError
