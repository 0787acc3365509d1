"""Kata `loop` (the agent loop): send the question, run the calls the model asks for, send
their results back, and go on until the model answers - or until it is time to stop.

The model speaks OpenAI's chat-completions format with native tool calls. Write
`agent_loop(chat, tools, question, max_iterations)`; the checker runs it against toolcall's
offline model misbehaving on purpose (unknown tools, wrong arguments, broken JSON, cut-off
replies, repeated calls), against tools that raise or hang, and against real servers' replies.

The rules the checker grades:
- Every reply goes back into the conversation, followed by one tool message per call, each
  with its call's id. Each request starts with the one before it: nothing is dropped.
- A failed call is not the end: its tool message starts with "error:" and says what went wrong,
  so the model can fix its call. Kinds of failure: an unknown tool (say which tools there are),
  arguments that are not a JSON object, a tool that raised (say its message), a tool that did
  not return within tool_timeout seconds.
- The loop ends when a reply has no tool calls (return its text), or after max_iterations
  replies that all asked for tools (return None): never call chat more often than that.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

Message = dict[str, Any]


def agent_loop(
    chat: Callable[[list[dict[str, Any]]], dict[str, Any]],
    tools: dict[str, Callable[..., Any]],
    question: str,
    max_iterations: int = 5,
    *,
    tool_timeout: float = 5.0,
) -> str | None:
    """Answer `question` with the model behind `chat` and the functions in `tools`.

    chat(messages) sends the conversation so far (the tool definitions are already bound
    into it) and returns the model's reply, an assistant message:
        {"role": "assistant", "content": str | None,
         "tool_calls": [{"id": str, "type": "function",
                         "function": {"name": str, "arguments": str}}]}
    "tool_calls" is absent or empty when the model answers. "arguments" is a JSON string, as
    the model wrote it: it may be broken. chat raises RuntimeError when the request is one a
    server would refuse (a call without its tool message, a tool message for no call).

    The messages you send: first {"role": "user", "content": question}; after each reply, the
    reply itself, then {"role": "tool", "tool_call_id": <the call's id>, "content": str} for
    each of its calls. content is the function's result: a str as it is, anything else as JSON
    (json.dumps); or, when the call failed, "error: " and what went wrong.

    tools maps a tool's name to a plain Python function, called with the arguments as keyword
    arguments. It may raise, or hang: give up on it after tool_timeout seconds (it may go on
    running in the background; that is fine).

    Returns the text of the first reply without tool calls, or None when max_iterations
    replies all asked for tools.
    """
    messages: list[Message] = [{"role": "user", "content": question}]
    for _ in range(max_iterations):
        reply = chat(messages)
        messages.append(reply)
        calls = reply.get("tool_calls") or []
        if not calls:
            return reply.get("content") or ""
        for call in calls:
            result = run_call(call, tools, tool_timeout)
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    return None


def run_call(call: Message, tools: dict[str, Callable[..., Any]], timeout: float) -> str:
    """The result of one call as the tool message's content; "error: ..." when it failed."""
    name = call["function"]["name"]
    if name not in tools:
        return f"error: unknown tool {name!r}; available tools: {', '.join(tools)}"
    try:
        arguments = json.loads(call["function"].get("arguments") or "{}")
    except ValueError as problem:
        return f"error: the arguments of {name} are not valid JSON ({problem}); send them again"
    if not isinstance(arguments, dict):
        return f"error: the arguments of {name} must be a JSON object"
    try:
        result = call_with_timeout(tools[name], arguments, timeout)
    except TimeoutError:
        return f"error: {name} timed out after {timeout:g} s"
    except Exception as failure:  # the tool's own failure: the model should hear of it
        return f"error: {name} failed: {type(failure).__name__}: {failure}"
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def call_with_timeout(function: Callable[..., Any], arguments: Message, timeout: float) -> Any:
    """`function(**arguments)` in a thread of its own; TimeoutError when it has not returned
    within `timeout` seconds. The thread is a daemon: a tool that hangs for good is left
    behind, and does not keep the program from ending."""
    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            outcome["result"] = function(**arguments)
        except Exception as failure:
            outcome["failure"] = failure

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise TimeoutError
    if "failure" in outcome:
        raise outcome["failure"]
    return outcome["result"]
