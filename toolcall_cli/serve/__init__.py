"""`toolcall serve`: the offline model, faults included, as an OpenAI-compatible HTTP server on
127.0.0.1, so a learner's own loop, or any SDK, can practise against a model that misbehaves on
demand. Each exchange is logged to the terminal as it finishes."""

from __future__ import annotations

import ipaddress
import threading

from rich.console import Console

from toolcall_cli.serve._answering import MODEL_ID, Answerer, ServeSettings
from toolcall_cli.serve._http import ServeServer
from toolcall_cli.serve._log import ServeLog, banner

__all__ = ["MODEL_ID", "ServeError", "ServeSettings", "serve"]

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


def host_note(host: str) -> str:
    """A warning for an address beyond this machine: the server has no key and no TLS."""
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if loopback:
        return ""
    return f"listening on {host}: anyone who can reach it can use it (no key, no TLS)"
