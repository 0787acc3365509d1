"""Paced streaming for the local models, so a streamed reply can be watched as it arrives.

The offline and scripted models produce a whole reply at once; a real model's tokens are spread
over time. Spacing the chunks out makes the stream strategy's behaviour visible in the live view:
text appearing, a call forming, its tool starting while later text still arrives.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from toolcall_cli.models.base import Model, context_window_of
from toolcall_cli.wire import ContextWindow, ModelRequest


class PacedModel:
    def __init__(
        self, inner: Model, delay: float, *, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.delay = delay
        self._sleep = sleep

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        for chunk in self.inner.stream(request):
            if request.streaming and self.delay > 0:
                self._sleep(self.delay)
            yield chunk

    def context_window(self) -> ContextWindow | None:
        return context_window_of(self.inner)
