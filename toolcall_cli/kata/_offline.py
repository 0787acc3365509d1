"""The offline model as the katas meet it: the replies it writes in whole runs with a fault
switched on (for the parsers), and a `chat` callable for the loop kata, refusing what a real
server refuses."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

from toolcall_cli.loop import run
from toolcall_cli.messages import ToolSpec, user
from toolcall_cli.offline import FAULT_KINDS, OfflineModel, make_faults
from toolcall_cli.strategies import get_strategy
from toolcall_cli.tools.loader import bundled_tools_dir, load_tools
from toolcall_cli.tools.registry import ToolRegistry
from toolcall_cli.wire import ModelRequest

TWO_CITIES = "What's the weather in Paris and in Tokyo?"
QUESTION_FOR: dict[str, str] = {
    "wrong_type": "Convert 5 km to miles",  # a number to write as a string
    "repeat_call": "What's the weather in Paris?",
}
"""The question each fault kind is asked with: one that gives the fault its chance to fire."""


def question_for(kind: str | None) -> str:
    return QUESTION_FOR.get(kind or "", TWO_CITIES)


def bundled_tools(*names: str) -> ToolRegistry:
    """The tools toolcall ships (tools.d), or those of them named."""
    registry = load_tools([bundled_tools_dir()]).registry
    if not names:
        return registry
    return ToolRegistry(tool for tool in registry if tool.name in names)


FAULT_CATEGORY: dict[str, str] = {
    "no_tool": "no call",
    "unknown_tool": "unknown tool",
    "wrong_param": "wrong arguments",
    "missing_arg": "wrong arguments",
    "extra_arg": "wrong arguments",
    "wrong_type": "wrong arguments",
    "repeat_call": "repeated call",
    "single_quotes": "broken JSON",
    "trailing_comma": "broken JSON",
    "unquoted_keys": "broken JSON",
    "broken_batch": "broken JSON",
    "code_fence": "code fence",
    "missing_close_tag": "missing close tag",
    "prose_around": "prose around",
    "truncated": "cut off",
    "split_tags": "split tags",
}
"""The kata category of the replies a fault kind makes (its recovery replies included); a
kata that files a kind elsewhere says so over this."""


def kinds_for(shape: str) -> tuple[list[str], list[str]]:
    """The fault kinds that apply to a wire shape ("text", "native", "json"), and the rest."""
    applies = [k for k in FAULT_KINDS if shape in make_faults([k])[0].shapes]
    return applies, [k for k in FAULT_KINDS if k not in applies]


class _Recorder:
    """A model that keeps every reply it streams, as the content pieces of its deltas."""

    name = "offline"

    def __init__(self, model: OfflineModel) -> None:
        self.model = model
        self.replies: list[list[str]] = []

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        pieces: list[str] = []
        self.replies.append(pieces)
        for chunk in self.model.stream(request):
            for choice in chunk.get("choices") or []:
                content = (choice.get("delta") or {}).get("content")
                if content:
                    pieces.append(content)
            yield chunk


def text_replies(kind: str | None, question: str) -> list[list[str]]:
    """Every reply of a whole run of toolcall's own loop (stream strategy, tags) against the
    offline model with fault `kind`, each as the chunks it was streamed in."""
    recorder = _Recorder(OfflineModel(seed=0, faults=make_faults([kind] if kind else [])))
    registry = bundled_tools()
    for _ in run(
        question, model=recorder, strategy=get_strategy("stream"), registry=registry, history=[]
    ):
        pass
    return recorder.replies


def json_mode_reply(
    kind: str | None, question: str, schema: dict[str, Any], specs: Sequence[ToolSpec]
) -> str:
    """The offline model's first reply in JSON mode, under the response schema `schema`."""
    strategy = get_strategy("schema", schema_mode="json")
    body = dict(strategy.build_request([user(question)], list(specs), "offline").body)
    json_schema = {"name": "reply", "strict": True, "schema": schema}
    body["response_format"] = {"type": "json_schema", "json_schema": json_schema}
    model = OfflineModel(seed=0, faults=make_faults([kind] if kind else []))
    content = first_message(model, body).get("content")
    return content if isinstance(content, str) else ""


def first_message(model: OfflineModel, body: dict[str, Any]) -> dict[str, Any]:
    """The assistant message of the model's (unstreamed) answer to `body`."""
    completion = next(iter(model.stream(ModelRequest(body))))
    message: dict[str, Any] = completion["choices"][0]["message"]
    return message


class Refused(RuntimeError):
    """A request a real server answers with 400 Bad Request."""


@dataclass
class OfflineChat:
    """`chat(messages) -> assistant message` for the loop kata: the offline model behind the
    chat-completions format with native tools, keeping every request and reply."""

    specs: Sequence[ToolSpec]
    faults: Sequence[str] = ()
    requests: list[list[dict[str, Any]]] = field(default_factory=list)
    replies: list[dict[str, Any]] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.model = OfflineModel(seed=0, faults=make_faults(list(self.faults)))

    def __call__(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        sent = self.take(messages)
        body = {"model": "offline", "messages": sent, "tools": [s.to_openai() for s in self.specs]}
        message = first_message(self.model, body)
        reply: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
        if message.get("tool_calls"):
            reply["tool_calls"] = message["tool_calls"]
        self.replies.append(copy.deepcopy(reply))
        return reply

    def take(self, messages: Any) -> list[dict[str, Any]]:
        """The request as sent (a copy: the loop may change its list later), or Refused."""
        try:
            sent: list[dict[str, Any]] = json.loads(json.dumps(messages))
        except (TypeError, ValueError) as error:
            self.refuse(f"the messages are not JSON: {error}")
        self.requests.append(sent)
        problem = refusal(sent)
        if problem:
            self.refuse(problem)
        return sent

    def refuse(self, problem: str) -> NoReturn:
        self.refusals.append(problem)
        raise Refused(f"400 Bad Request: {problem}")


@dataclass
class ScriptedChat(OfflineChat):
    """The same `chat`, answering with replies given in advance (a real server's, recorded)."""

    script: Sequence[dict[str, Any]] = ()

    def __call__(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        self.take(messages)
        if len(self.replies) >= len(self.script):
            self.refuse("the recorded conversation has no more replies")
        reply = copy.deepcopy(dict(self.script[len(self.replies)]))
        self.replies.append(copy.deepcopy(reply))
        return reply


ROLES = ("system", "user", "assistant", "tool")


def refusal(messages: Any) -> str | None:
    """What a chat-completions server would reject in these messages, or None."""
    if not isinstance(messages, list) or not messages:
        return "messages must be a non-empty list"
    waiting: set[str] = set()  # call ids of the last assistant message not yet answered
    for n, message in enumerate(messages):
        if problem := _message_refusal(n, message, waiting):
            return problem
        waiting = _waiting_after(message, waiting)
    if waiting:
        return f"the calls {sorted(waiting)} of the last reply have no tool message"
    return None


def _message_refusal(n: int, message: Any, waiting: set[str]) -> str | None:
    """What is wrong with messages[n], given the calls still waiting for their tool message."""
    role = message.get("role") if isinstance(message, dict) else None
    if role not in ROLES:
        return f"messages[{n}] has no valid role (one of {', '.join(ROLES)})"
    if role == "tool":
        call_id = message.get("tool_call_id")
        if call_id not in waiting:
            return f"messages[{n}] answers tool_call_id {call_id!r}, which no call before it has"
        if not isinstance(message.get("content"), str):
            return f"messages[{n}]: a tool message's content must be a string"
        return None
    if waiting:
        return f"messages[{n}]: the calls {sorted(waiting)} have no tool message before it"
    if role != "assistant" and not isinstance(message.get("content"), str):
        return f"messages[{n}]: a {role} message's content must be a string"
    return None


def _waiting_after(message: dict[str, Any], waiting: set[str]) -> set[str]:
    """The call ids still waiting for a tool message once `message` is in."""
    if message["role"] == "tool":
        return waiting - {message["tool_call_id"]}
    if message["role"] == "assistant":
        calls = message.get("tool_calls") or []
        return {str(c.get("id")) for c in calls if isinstance(c, dict)}
    return waiting
