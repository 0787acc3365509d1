"""Kata `schema` (schema strategy): structured output. The request carries one JSON Schema that
every reply must match - a call to one of the tools, or the final answer - and the engine then
checks each call's arguments against its tool, fixing what is unambiguous and reporting the
rest field by field, so the model can correct itself.

A tool is given as {"name": str, "description": str, "parameters": <JSON Schema object>},
where parameters has "properties", maybe "required", and per property the keywords "type"
(string, integer, number, boolean, array), "enum", "minimum", "maximum", "items".

Write two functions:
- build_schema(tools): the response schema (see its docstring).
- validate_call(tools, call): coerce, then check, one call's arguments (see its docstring).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

INTEGER = re.compile(r"[+-]?\d+")
NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def build_schema(tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON Schema a reply must match: {"anyOf": [...]} (or "oneOf") of

    - the answer: an object {"answer": <string>}, nothing else;
    - one branch per tool: an object {"name": <that tool's name, as "const">, "arguments":
      <that tool's parameters, with no other properties allowed>}, nothing else.

    So {"name": "get_weather", "arguments": {"city": "Paris"}} matches when get_weather takes a
    city, and an unknown name, a missing required argument, an extra argument or a value of
    the wrong type does not.
    """
    answer = {
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"],
        "additionalProperties": False,
    }
    calls = [
        {
            "type": "object",
            "description": tool.get("description", ""),
            "properties": {
                "name": {"const": tool["name"]},
                "arguments": {**tool["parameters"], "additionalProperties": False},
            },
            "required": ["name", "arguments"],
            "additionalProperties": False,
        }
        for tool in tools
    ]
    return {"anyOf": [answer, *calls]}


def validate_call(
    tools: list[dict[str, Any]], call: dict[str, Any]
) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """Check one call {"name": str, "arguments": dict}; return (arguments, errors).

    arguments: the call's arguments after coercion, where the intent is unambiguous:
      integer  "5" -> 5, "5.0" -> 5, 5.0 -> 5     number  "2.5" -> 2.5, "3" -> 3
      boolean  "true" / "False" -> True / False     string  a number -> its digits (600519)
      enum     a value that differs only in case ("Tomorrow" -> "tomorrow"), or a number
               written as a string ("2" -> 2 when 2 is allowed)
      array    a JSON array written as a string is decoded; a lone value becomes [value];
               each item is coerced by "items"
    Nothing else is coerced: True is not 1, 2.5 is not an integer, "abc" is not a number.
    Arguments the tool does not take are left as they are (and reported).

    errors: [] when the call can run; else one dict per problem, {"field": <argument name>,
    "error": <kind>, "message": <one line telling the model what to fix>}, where kind is
      "missing"      a required argument is absent
      "unexpected"   an argument the tool does not take
      "type", "enum", "minimum", "maximum"   the JSON Schema keyword the value fails
    An unknown tool is ({}, [{"field": "name", "error": "unknown_tool", "message": ...}]);
    arguments that are not an object are ({}, [{"field": "arguments", "error": "type", ...}]).
    """
    name = call.get("name")
    tool = next((t for t in tools if t["name"] == name), None)
    if tool is None:
        known = ", ".join(t["name"] for t in tools)
        return {}, [problem("name", "unknown_tool", f"unknown tool {name!r}; the tools: {known}")]
    arguments = call.get("arguments")
    if not isinstance(arguments, dict):
        return {}, [problem("arguments", "type", "arguments must be a JSON object")]
    schema = tool["parameters"]
    properties: dict[str, Any] = schema.get("properties", {})
    fixed = {k: coerce(v, properties[k]) if k in properties else v for k, v in arguments.items()}
    errors = [
        problem(field, "missing", f"missing required argument {field!r}: add it")
        for field in schema.get("required", [])
        if field not in fixed
    ]
    for field, value in fixed.items():
        if field not in properties:
            allowed = ", ".join(properties)
            message = f"unexpected argument {field!r}: remove it (the arguments: {allowed})"
            errors.append(problem(field, "unexpected", message))
        elif found := check(value, properties[field]):
            errors.append(problem(field, found[0], f"{field!r} {found[1]}"))
    return fixed, errors


def problem(field: str, kind: str, message: str) -> dict[str, str]:
    return {"field": field, "error": kind, "message": message}


# --- coercion: only what cannot be misread ----------------------------------------------------


def coerce(value: Any, schema: dict[str, Any]) -> Any:
    """`value` converted to what `schema` expects where that is unambiguous, else unchanged."""
    if value is None:
        return value
    if "enum" in schema:
        return coerce_enum(value, schema["enum"])
    kind = schema.get("type")
    if kind == "array":
        return coerce_array(value, schema.get("items", {}))
    if isinstance(value, bool):
        return value  # True is not 1, nor "True"
    scalar = SCALARS.get(kind) if isinstance(kind, str) else None
    return scalar(value) if scalar else value


def coerce_integer(value: Any) -> Any:
    number = as_number(value)
    if isinstance(number, float) and number.is_integer():
        return int(number)
    return number if isinstance(number, int) else value  # 2.5 stays 2.5, "2.5" stays "2.5"


def coerce_boolean(value: Any) -> Any:
    word = value.strip().lower() if isinstance(value, str) else None
    return word == "true" if word in ("true", "false") else value


def coerce_string(value: Any) -> Any:
    return str(value) if isinstance(value, (int, float)) else value


def as_number(value: Any) -> Any:
    """A numeric string as an int or float; anything else unchanged."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if INTEGER.fullmatch(text):
        return int(text)
    if NUMBER.fullmatch(text) and math.isfinite(float(text)):
        return float(text)
    return value


def coerce_enum(value: Any, allowed: list[Any]) -> Any:
    if value in allowed:
        return value
    if isinstance(value, str):
        wanted = value.strip().casefold()
        same = [a for a in allowed if isinstance(a, str) and a.casefold() == wanted]
        if len(same) == 1:
            return same[0]
    number = as_number(value)
    return number if number in allowed and not isinstance(value, bool) else value


def coerce_array(value: Any, items: dict[str, Any]) -> Any:
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            decoded = json.loads(value)
        except ValueError:
            decoded = None
        value = decoded if isinstance(decoded, list) else value
    values = value if isinstance(value, list) else [value]
    return [coerce(item, items) for item in values] if items else values


SCALARS: dict[str, Callable[[Any], Any]] = {
    "integer": coerce_integer,
    "number": as_number,
    "boolean": coerce_boolean,
    "string": coerce_string,
}


# --- checking: the keywords the tools use -------------------------------------------------------

TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def check(value: Any, schema: dict[str, Any]) -> tuple[str, str] | None:
    """The first keyword of `schema` that `value` fails, with why; None when it passes."""
    kind = schema.get("type")
    if kind in TYPES and not has_type(value, kind):
        return "type", f"must be {'an' if kind[0] in 'aeiou' else 'a'} {kind}, not {value!r}"
    if "enum" in schema and value not in schema["enum"]:
        return "enum", f"must be one of {', '.join(map(repr, schema['enum']))}, not {value!r}"
    number = has_type(value, "number")  # a bound says nothing about other values
    if number and "minimum" in schema and value < schema["minimum"]:
        return "minimum", f"must be at least {schema['minimum']}, not {value!r}"
    if number and "maximum" in schema and value > schema["maximum"]:
        return "maximum", f"must be at most {schema['maximum']}, not {value!r}"
    if kind == "array" and "items" in schema:
        return next(filter(None, (check(item, schema["items"]) for item in value)), None)
    return None


def has_type(value: Any, kind: str) -> bool:
    if isinstance(value, bool) and kind != "boolean":
        return False  # in Python True is an int; in JSON it is not a number
    return isinstance(value, TYPES[kind])
