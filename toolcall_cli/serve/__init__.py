"""`toolcall serve`: the offline model, faults included, as an OpenAI-compatible HTTP server on
127.0.0.1, so a learner's own loop, or any SDK, can practise against a model that misbehaves on
demand. The server draws nothing: the command's log (render/serve_log.py) is handed each
exchange, and the kata grader starts the same server in a thread to judge request bodies.

Public here: the names in `__all__` (the server, its settings, what it answers, one exchange);
its modules are private."""

from __future__ import annotations

import ipaddress

from toolcall_cli.serve._answering import MODEL_ID, Answer, Answerer, ServeSettings
from toolcall_cli.serve._http import Exchange, ServeServer

__all__ = [
    "MODEL_ID",
    "Answer",
    "Answerer",
    "Exchange",
    "ServeServer",
    "ServeSettings",
    "host_note",
]


def host_note(host: str) -> str:
    """A warning for an address beyond this machine: the server has no key and no TLS."""
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if loopback:
        return ""
    return f"listening on {host}: anyone who can reach it can use it (no key, no TLS)"
