"""The stop signals as a terminal gives them to a program it starts, for a test's subprocess."""

from __future__ import annotations

import signal


def as_from_a_terminal() -> None:
    """`preexec_fn`: SIGINT and SIGHUP back to their default. A suite run as a background job
    (`pytest &`, nohup, a CI step started so) passes them on ignored, and toolcall rightly leaves
    an ignored signal alone (`nohup toolcall serve` must outlive its terminal): a test that stops
    its process by either would wait in vain, or see it go on."""
    for number in (signal.SIGINT, signal.SIGHUP):
        signal.signal(number, signal.SIG_DFL)
