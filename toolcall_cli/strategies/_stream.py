"""The stream strategy: the reply is parsed while tokens arrive, and each tool starts as soon as
its call is complete, while the model is still writing."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Literal

from toolcall_cli.messages import Message, ToolSpec
from toolcall_cli.strategies.base import ReplyParser
from toolcall_cli.strategies.schema import SchemaStrategy
from toolcall_cli.strategies.text_prompt import PromptStyle
from toolcall_cli.strategies.text_protocol import TextProtocolStrategy
from toolcall_cli.wire import NO_SAMPLING, ModelRequest, Sampling

StreamMode = Literal["tags", "native"]


class StreamStrategy:
    """The text protocol (`tags`, parsed incrementally) or native calling (`native`, OpenAI
    `tool_calls` deltas assembled by index), streamed. Their parsers already read a reply chunk
    by chunk: what changes is the request, and `streaming`, which lets the loop start a tool
    while the reply goes on."""

    name = "stream"
    streaming = True

    def __init__(
        self,
        mode: StreamMode = "tags",
        *,
        dag: bool = False,
        prompt_style: PromptStyle = "full",
        sampling: Sampling = NO_SAMPLING,
    ) -> None:
        self.mode = mode
        self.dag = dag
        self.sampling = sampling
        self._base: TextProtocolStrategy | SchemaStrategy = (
            SchemaStrategy("tools", dag=dag, prompt_style=prompt_style, sampling=sampling)
            if mode == "native"
            else TextProtocolStrategy(dag=dag, prompt_style=prompt_style, sampling=sampling)
        )

    def build_request(
        self, history: Sequence[Message], tools: Sequence[ToolSpec], model: str
    ) -> ModelRequest:
        body = dict(self._base.build_request(history, tools, model).body)
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
        return ModelRequest(body)

    def parser(self, call_id_prefix: str, tools: Collection[str] = ()) -> ReplyParser:
        return self._base.parser(call_id_prefix, tools)

    def to_wire(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        return self._base.to_wire(messages)
