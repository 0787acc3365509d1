"""The one way assembly fails: a sentence for the user and the kind of failure it is."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
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


@contextlib.contextmanager
def usage_errors(*kinds: type[Exception]) -> Iterator[None]:
    """These errors of the layers below, raised inside, as the usage error of their message."""
    try:
        yield
    except kinds as error:
        raise AppError(str(error)) from None
