"""Kata `request` (schema strategy): the request itself. Turn Python functions into the tool
definitions an OpenAI-compatible server takes, and write the whole chat-completions body: the
tools, tool_choice, and the conversation so far with every call and its result.

Write `tool_schema(func)` and `build_request(question, tools, history)`. The checker calls
tool_schema on functions typed with str, int, float, bool, list[...], Literal[...] and
Optional[...], with defaults and Google-style docstrings, checks that what comes back is a
JSON Schema, and tries argument sets on it. It validates each body build_request writes
against the chat-completions request shape (a JSON Schema of what OpenAI accepts), then sends
it to `toolcall serve`, which must answer it.

The rules the checker grades:
- tool_schema(func) is the entry of the request's "tools" list:
      {"type": "function", "function": {"name": ..., "description": ..., "parameters": ...}}
  name: the function's name. description: the docstring's first paragraph.
  parameters: {"type": "object", "properties": {...}, "required": [...],
  "additionalProperties": false}: one property per parameter, each with its type, and with
  the docstring's `Args:` line as its "description".
  Types: str "string", int "integer", float "number", bool "boolean", list[X] an "array" of
  X's "items", Literal["a", "b"] an "enum" of its values, Optional[X] (or X | None) X or null.
  A parameter without a default is required. One with a default is not, and its schema says
  the default ("default": <the value>), so the model knows what leaving it out means.
- build_request(question, tools, history) is the body to POST to /v1/chat/completions:
  "model", "messages", "tools" (tool_schema of each function, in order), "tool_choice": "auto".
  The messages are the history, then {"role": "user", "content": question}. A system message
  first is allowed, not needed.
  history holds the earlier questions, as the loop keeps them:
      [{"question": str,
        "rounds": [[{"id": str, "name": str, "arguments": dict, "result": str}, ...], ...],
        "answer": str}]
  Each question is a user message. Each round is one assistant message whose "tool_calls"
  carry the round's calls ({"id", "type": "function", "function": {"name", "arguments": <the
  arguments as a JSON string>}}), followed by one tool message per call:
  {"role": "tool", "tool_call_id": <its id>, "content": <its result>}. The answer is the
  assistant message that ends the question.
"""

from __future__ import annotations

import inspect
import json
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, Union

SCALARS = {str: "string", int: "integer", float: "number", bool: "boolean"}
ARG_SECTIONS = ("args:", "arguments:", "parameters:")


def tool_schema(func: Callable[..., Any]) -> dict[str, Any]:
    """The "tools" entry for `func`: {"type": "function", "function": {...}} (see above)."""
    hints = typing.get_type_hints(func)
    summary, described = read_docstring(inspect.getdoc(func) or "")
    properties: dict[str, Any] = {}
    required: list[str] = []
    for parameter in inspect.signature(func).parameters.values():
        schema = type_schema(hints[parameter.name])
        if parameter.name in described:
            schema["description"] = described[parameter.name]
        if parameter.default is inspect.Parameter.empty:
            required.append(parameter.name)
        else:
            schema["default"] = parameter.default
        properties[parameter.name] = schema
    parameters = {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    function = {"name": func.__name__, "description": summary, "parameters": parameters}
    return {"type": "function", "function": function}


def type_schema(hint: Any) -> dict[str, Any]:
    """The JSON Schema of one annotation."""
    origin, arguments = typing.get_origin(hint), typing.get_args(hint)
    if hint in SCALARS:
        return {"type": SCALARS[hint]}
    if origin is Literal:
        return {"enum": list(arguments)}
    if origin is list:
        return {"type": "array", "items": type_schema(arguments[0]) if arguments else {}}
    if origin in (Union, types.UnionType):
        options = [type_schema(a) for a in arguments if a is not type(None)]
        if type(None) in arguments:
            options.append({"type": "null"})
        return options[0] if len(options) == 1 else {"anyOf": options}
    raise TypeError(f"no JSON Schema for the annotation {hint!r}")


def read_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The first paragraph, and each `name: text` line of the Args section."""
    summary = " ".join(doc.split("\n\n", 1)[0].split())
    described: dict[str, str] = {}
    in_args = False
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped.lower() in ARG_SECTIONS:
            in_args = True
        elif in_args and stripped.endswith(":") and not line.startswith(" "):
            in_args = False  # the next section (Returns:, Raises:)
        elif in_args and ":" in stripped:
            name, text = stripped.split(":", 1)
            described[name.split("(")[0].strip()] = text.strip()
    return summary, described


def build_request(
    question: str,
    tools: list[Callable[..., Any]],
    history: list[dict[str, Any]],
    model: str = "toolcall-offline",
) -> dict[str, Any]:
    """The chat-completions body for `question`, after `history`, offering `tools`."""
    messages: list[dict[str, Any]] = []
    for turn in history:
        messages.append({"role": "user", "content": turn["question"]})
        for calls in turn["rounds"]:
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call["id"],
                            "type": "function",
                            "function": {
                                "name": call["name"],
                                "arguments": json.dumps(call["arguments"], ensure_ascii=False),
                            },
                        }
                        for call in calls
                    ],
                }
            )
            messages += [
                {"role": "tool", "tool_call_id": call["id"], "content": call["result"]}
                for call in calls
            ]
        messages.append({"role": "assistant", "content": turn["answer"]})
    messages.append({"role": "user", "content": question})
    body: dict[str, Any] = {"model": model, "messages": messages}
    if tools:  # tool_choice is refused without tools
        body["tools"] = [tool_schema(f) for f in tools]
        body["tool_choice"] = "auto"
    return body
