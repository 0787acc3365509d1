"""Kata `request`, whiteboard-sized: a signature as a JSON Schema; the body with the tools,
tool_choice and each earlier call followed by its result under its id. It passes every check."""

import inspect
import json
import typing
from collections.abc import Callable
from typing import Any, Literal

SCALARS = {str: "string", int: "integer", float: "number", bool: "boolean"}


def type_schema(hint: Any) -> dict[str, Any]:
    args = typing.get_args(hint)
    if hint in SCALARS:
        return {"type": SCALARS[hint]}
    if typing.get_origin(hint) is Literal:
        return {"enum": list(args)}
    if typing.get_origin(hint) is list:
        return {"type": "array", "items": type_schema(args[0])}
    return {"anyOf": [type_schema(a) if a is not type(None) else {"type": "null"} for a in args]}


def tool_schema(func: Callable[..., Any]) -> dict[str, Any]:
    hints, doc = typing.get_type_hints(func), inspect.getdoc(func) or ""
    notes = dict(n.strip().split(": ", 1) for n in doc.split("Args:")[-1].split("\n") if ": " in n)
    props, required = {}, []
    for p in inspect.signature(func).parameters.values():
        props[p.name] = {**type_schema(hints[p.name]), "description": notes.get(p.name, "")}
        if p.default is p.empty:
            required.append(p.name)
        else:
            props[p.name]["default"] = p.default
    parameters = {"type": "object", "properties": props, "required": required,
                  "additionalProperties": False}  # fmt: skip
    function = {
        "name": func.__name__,
        "description": doc.split("\n\n")[0],
        "parameters": parameters,
    }
    return {"type": "function", "function": function}


def build_request(
    question: str, tools: list[Callable[..., Any]], history: list[dict[str, Any]]
) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for turn in history:
        messages.append({"role": "user", "content": turn["question"]})
        for calls in turn["rounds"]:
            wire = [{"id": c["id"], "type": "function", "function": {"name": c["name"],
                     "arguments": json.dumps(c["arguments"])}} for c in calls]  # fmt: skip
            messages.append({"role": "assistant", "content": None, "tool_calls": wire})
            messages += [
                {"role": "tool", "tool_call_id": c["id"], "content": c["result"]} for c in calls
            ]
        messages.append({"role": "assistant", "content": turn["answer"]})
    messages.append({"role": "user", "content": question})
    body = {"model": "toolcall-offline", "messages": messages}
    return {**body, "tools": [tool_schema(f) for f in tools], "tool_choice": "auto"}
