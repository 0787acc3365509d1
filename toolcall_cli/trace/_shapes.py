"""What each record of a trace must hold, checked as it is read: a trace may come from anyone
(shared, edited, cut by a crash), and the commands that read it (`trace show`, `doctor`,
`replay`, `--script`) take each record as the shape it was written in.

An event's record is checked against the event's own fields (a field added to an event is
checked with no change here); the header and the records only a trace has are declared below in
the same way. A kind this toolcall does not know passes unchecked: its readers pass it over.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import math
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Union

from toolcall_cli.events import Event, FedBack, IterationStarted
from toolcall_cli.limits import Limits
from toolcall_cli.strictjson import json_type_in_words

Check = Callable[[Any, str], Any]
"""Takes a value and where it is (`call.name`), and gives the value back as its readers take it,
or raises ShapeError."""

EVENT_TYPES: dict[str, type[Any]] = {
    cls.__dataclass_fields__["kind"].default: cls for cls in typing.get_args(Event)
}
"""Each event kind's class, by the `kind` its records carry."""

SHOWN_KEY = 40
"""The longest key of a trace's own a message names."""
_NOT_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
"""How strictjson writes the numbers JSON does not have; read back as those numbers."""


class ShapeError(ValueError):
    """A record that does not hold what its kind does; the message says which field, and how."""


# --- the records only a trace has -----------------------------------------------------------------


@dataclass(frozen=True)
class ToolEntry:
    name: str
    description: str = ""
    parameters: dict[str, Any] | None = None
    source: str | None = None


@dataclass(frozen=True)
class RetrievalSettings:
    retrieve: int | None = None
    retrieve_over: int | None = None
    ranker: str | None = None


@dataclass(frozen=True)
class Settings:
    """A header's `settings`: each one may be missing (an older toolcall wrote fewer)."""

    model: str | None = None
    strategy: str | None = None
    schema_mode: str | None = None
    stream_mode: str | None = None
    base_url: str | None = None
    profile: str | None = None
    limits: Limits | None = None
    sampling: dict[str, float] | None = None
    system_prompt: str | None = None
    dag: bool | None = None
    prompt_style: str | None = None
    seed: int | None = None
    faults: tuple[str, ...] | None = None
    fault_rate: float | None = None
    script: str | None = None
    allow: str | None = None
    max_parallel: int | None = None
    retrieval: RetrievalSettings | None = None
    mcp_servers: tuple[dict[str, Any], ...] | None = None


@dataclass(frozen=True)
class Header:
    format: str
    version: int
    toolcall: str | None = None
    created: str | None = None
    command: str | None = None
    settings: Settings | None = None
    tools: tuple[ToolEntry, ...] | None = None
    plugins: dict[str, str] | None = None
    replay_of: str | None = None


@dataclass(frozen=True)
class Interrupted:
    reason: str | None = None
    detail: str | None = None


@dataclass(frozen=True)
class ScriptEnd:
    message: str | None = None
    replies: int | None = None
    requests: int | None = None


@dataclass(frozen=True)
class Timed:
    """What every record may carry besides its kind's own fields."""

    t: float | None = None


# --- the wire values events carry as plain JSON, as far as their readers look into them ---------


@dataclass(frozen=True)
class WireMessage:
    role: Any = None
    content: Any = None
    tool_calls: tuple[dict[str, Any], ...] | None = None


@dataclass(frozen=True)
class WireRequest:
    messages: tuple[WireMessage, ...] | None = None
    tools: tuple[dict[str, Any], ...] | None = None
    response_format: dict[str, Any] | None = None


FIELD_SHAPES: dict[tuple[type[Any], str], Any] = {
    (IterationStarted, "request"): WireRequest,
    (FedBack, "messages"): tuple[WireMessage, ...],
}
"""Event fields typed as any JSON whose readers still look inside (`trace show` counts the
request's messages, `doctor` pairs each fed-back message with its call)."""


TRACE_ONLY: dict[str, type[Any]] = {
    "trace_header": Header,
    "interrupted": Interrupted,
    "script_exhausted": ScriptEnd,
    "script_unused": ScriptEnd,
}


# --- checking ------------------------------------------------------------------------------------


def checked_record(record: dict[str, Any]) -> dict[str, Any]:
    """`record` (a JSON object with a string `kind`) as its readers may take it: each field of
    its kind present where the kind needs it and of its type, and the non-finite numbers
    strictjson writes as strings read back as numbers. Raises ShapeError saying what is wrong."""
    cls: Any = EVENT_TYPES.get(record["kind"]) or TRACE_ONLY.get(record["kind"])
    record = _checker(Timed)(record, "")
    if cls is None:
        return record
    checked: dict[str, Any] = _checker(cls)(record, "")
    return checked


@functools.cache
def _checker(hint: Any) -> Check:
    """The check for a value of the type `hint` (made once per type)."""
    origin = typing.get_origin(hint)
    if hint is Any:
        return lambda value, where: value
    if origin is Literal:
        return _literal(typing.get_args(hint))
    if origin in (Union, types.UnionType):
        return _union(typing.get_args(hint))
    if origin is tuple:
        return _sequence(_checker(typing.get_args(hint)[0]))
    if origin is dict:
        return _mapping(_checker(typing.get_args(hint)[1]))
    if dataclasses.is_dataclass(hint):
        return _fields_checker(hint)
    return _SCALARS[hint]


def _scalar(test: Callable[[Any], bool], name: str) -> Check:
    def check(value: Any, where: str) -> Any:
        if not test(value):
            raise ShapeError(f"`{where}` must be {name}, not {json_type_in_words(value)}")
        return value

    return check


def _number(value: Any, where: str) -> Any:
    if isinstance(value, str) and value in _NOT_FINITE:
        return _NOT_FINITE[value]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ShapeError(f"`{where}` must be a number, not {json_type_in_words(value)}")
    return value


_SCALARS: dict[Any, Check] = {
    str: _scalar(lambda value: isinstance(value, str), "a string"),
    bool: _scalar(lambda value: isinstance(value, bool), "true or false"),
    int: _scalar(lambda value: type(value) is int, "a whole number"),
    float: _number,
    type(None): _scalar(lambda value: value is None, "null"),
}


def _literal(allowed: tuple[Any, ...]) -> Check:
    def check(value: Any, where: str) -> Any:
        if not any(value == choice and type(value) is type(choice) for choice in allowed):
            names = ", ".join(f'"{choice}"' for choice in allowed)
            raise ShapeError(f"`{where}` must be one of {names}")
        return value

    return check


def _union(arms: tuple[Any, ...]) -> Check:
    nullable = type(None) in arms
    checks = [_checker(arm) for arm in arms if arm is not type(None)]

    def check(value: Any, where: str) -> Any:
        if value is None and nullable:
            return None
        if len(checks) == 1:  # `X | None`: what is wrong inside X says most
            return checks[0](value, where)
        for arm in checks:
            with contextlib.suppress(ShapeError):
                return arm(value, where)
        raise ShapeError(f"`{where}` cannot be {json_type_in_words(value)}")

    return check


def _sequence(item: Check) -> Check:
    def check(value: Any, where: str) -> Any:
        if not isinstance(value, list):
            raise ShapeError(f"`{where}` must be a list, not {json_type_in_words(value)}")
        items = [item(element, f"{where}[{index}]") for index, element in enumerate(value)]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items

    return check


def _mapping(item: Check) -> Check:
    def check(value: Any, where: str) -> Any:
        if not isinstance(value, dict):
            raise ShapeError(f"`{where}` must be an object, not {json_type_in_words(value)}")
        items = {key: item(element, _join(where, _shown(key))) for key, element in value.items()}
        return value if all(items[key] is value[key] for key in value) else items

    return check


def _fields_checker(cls: Any) -> Check:
    """The check of an object holding the fields of the dataclass `cls` (others pass as they
    are): each one without a default must be there."""
    hints = typing.get_type_hints(cls)
    fields = [
        (
            field.name,
            _checker(FIELD_SHAPES.get((cls, field.name), hints[field.name])),
            _required(field),
        )
        for field in dataclasses.fields(cls)
        # A field a trace never holds (an event's answer slot) is not looked for in one.
        if field.init and field.name != "kind" and field.metadata.get("recorded", True)
    ]

    def check(value: Any, where: str) -> Any:
        if not isinstance(value, dict):
            raise ShapeError(f"`{where}` must be an object, not {json_type_in_words(value)}")
        changed: dict[str, Any] = {}
        for name, check_field, required in fields:
            if name not in value:
                if required:
                    raise ShapeError(f"`{_join(where, name)}` is missing")
                continue
            item = check_field(value[name], _join(where, name))
            if item is not value[name]:
                changed[name] = item
        return {**value, **changed} if changed else value

    return check


def _required(field: dataclasses.Field[Any]) -> bool:
    return field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING


def _shown(key: str) -> str:
    """A key of the trace's own as a message may show it: on one line, and short."""
    text = json.dumps(key)[1:-1]
    return text if len(text) <= SHOWN_KEY else text[: SHOWN_KEY - 1] + "…"


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key
