"""The one way assembly fails: a sentence for the user and the kind of failure it is."""

from __future__ import annotations

from typing import Literal

FailureKind = Literal["usage", "failure"]
"""usage: the user asked for something that cannot be (exit 2 on the command line); failure:
something that should have worked did not (exit 1)."""


class AppError(Exception):
    """A session that cannot be built as asked. The message is one line, ready to show."""

    def __init__(self, message: str, kind: FailureKind = "usage") -> None:
        super().__init__(message)
        self.message = message
        self.kind: FailureKind = kind
