"""A process told to end from outside (SIGTERM, SIGHUP), as an exception every layer can name:
the command line installs the handler that raises it, and whatever runs below (a run, an eval's
pool of runs, the server) ends its own work on the way out, naming the signal in its trace."""

from __future__ import annotations

import signal
from typing import Literal

SignalReason = Literal["sigterm", "sighup"]
"""How a trace names the signal that ended its run (its `interrupted` line's reason)."""


class Terminated(SystemExit):
    """Raised in the main thread on SIGTERM, or on SIGHUP (the terminal window closed, an ssh
    link dropped). Unhandled, either ends the process at once: the live view leaves the
    terminal without its cursor, and the trace without its end. A SystemExit, not a
    KeyboardInterrupt: Ctrl-C during tools cancels them and the run goes on, but a process told
    to end must end; the commands that write a trace end it on the way out. Its code is 128 +
    the signal's number, as the shell reports it (143, 129)."""

    def __init__(self, signum: int = signal.SIGTERM) -> None:
        super().__init__(128 + signum)
        self.signal = signal.Signals(signum)

    @property
    def reason(self) -> SignalReason:
        return "sighup" if self.signal.name == "SIGHUP" else "sigterm"
