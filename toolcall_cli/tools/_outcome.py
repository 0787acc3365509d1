"""Running a tool's function and turning what it returns (or raises) into the text the model
reads: shared by the thread pool and the isolated worker, so both give the same result."""

from __future__ import annotations

import enum
import json
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from toolcall_cli import strictjson
from toolcall_cli.tools.schema import member_value


@dataclass
class Outcome:
    """What the tool's thread or process produced: the result's text, or why there is none."""

    text: str = ""
    failure: tuple[str, str] | None = None
    """(error kind, message) when the tool raised or its result could not become text."""


def outcome_of(call: Callable[[], object]) -> Outcome:
    """Run the tool (`call`) and turn its value (or exception) into text, all in the tool's own
    thread or process: both run the tool's own code (`__str__`, `default=str`), which may fail in
    any way or hang, and only there is it bounded by the timeout and safe to let anything escape
    from."""
    try:
        value = call()
    except BaseException as error:  # even SystemExit must not end the run
        return failed(exception_text(error))
    try:
        return Outcome(text=result_text(value))
    except RecursionError:
        too_deep = "the result is nested too deeply to be turned into JSON; return a flatter value."
        return failed(too_deep)
    except BaseException as error:
        return failed(f"the result could not be turned into text: {exception_text(error)}")


def call_with(func: Callable[..., object], arguments: dict[str, Any]) -> object:
    """Call a tool's function with the model's arguments, each as its parameter declares it."""
    try:
        hints = typing.get_type_hints(func)
    except Exception:  # a callable of no readable annotations (an MCP tool's, say): as it came
        hints = {}
    return func(**{name: _declared(value, hints.get(name)) for name, value in arguments.items()})


def _declared(value: object, annotation: object) -> object:
    """JSON has no Enum: the schema offers an Enum parameter's values, and the value the model
    chose becomes the member the function declares (`color.value`, `is Color.RED` work). Any
    other value is passed as it came."""
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return _member(annotation, value)
    origin = typing.get_origin(annotation)
    members = typing.get_args(annotation)
    if origin is typing.Literal:  # Literal[Color.RED, ...]: the member of the value chosen
        return _literal_member(members, value)
    if origin is typing.Union or origin is types.UnionType:  # Optional[Color]
        return next((v for m in members if (v := _declared(value, m)) is not value), value)
    return _declared_inside(value, origin, members)


def _declared_inside(value: object, origin: object, members: tuple[object, ...]) -> object:
    """Each item of a list, each value of a dict, as the annotation declares it."""
    if origin is list and isinstance(value, list) and members:
        return [_declared(item, members[0]) for item in value]
    if origin is dict and isinstance(value, dict) and len(members) == 2:
        return {key: _declared(item, members[1]) for key, item in value.items()}
    return value


def _literal_member(options: tuple[object, ...], value: object) -> object:
    members = (o for o in options if isinstance(o, enum.Enum) and o.value == value)
    return next(members, value)


def _member(kind: type[enum.Enum], value: object) -> object:
    """The member of `kind` with this value; the value as it came when there is none (the
    schema's enum has refused it before, unless the tool takes any value)."""
    try:
        return kind(value)
    except ValueError:
        return value


def failed(message: str) -> Outcome:
    """The outcome of a call that failed, with what the model reads of why."""
    return Outcome(failure=("tool_error", message))


def exception_text(error: BaseException) -> str:
    """`ValueError: <message>`: the message is how the tool tells the model what to fix."""
    try:
        message = str(error)
    except BaseException:  # a hostile __str__; the type name still says what happened
        message = "(its message could not be read)"
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def result_text(value: object) -> str:
    """What the model reads: strings as they are, everything else as JSON (None → "null")."""
    # A date or a set is better shown as text than refused (_as_text).
    text = value if isinstance(value, str) else _json_text_of(value)
    # Lone surrogates (from bytes decoded with surrogateescape) cannot be sent as UTF-8. The
    # unbound str.encode also makes a plain str of a str subclass, whatever it overrides.
    return str.encode(text, "utf-8", "replace").decode("utf-8")


def _as_text(value: object) -> object:
    """What JSON cannot hold, as the model reads it: an Enum member as its value (Color.RED
    means "red", as the schema offered it), a set as a list (of values: never a member's repr),
    in an order that does not change from run to run, anything else (a date) as its text."""
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    return member_value(value) if isinstance(value, enum.Enum) else str(value)


def _member_keys_as_values(value: object, found: list[enum.Enum]) -> object:
    """`value` with each Enum member used as a key ({Color.RED: 3}) made its value, anywhere in
    it, each one noted in `found`."""
    if isinstance(value, dict):
        found += [k for k in value if isinstance(k, enum.Enum)]
        return {member_value(k): _member_keys_as_values(v, found) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_member_keys_as_values(item, found) for item in value]
    return value


def _json_text_of(value: object) -> str:
    """A returned value as strict JSON: an Infinity or NaN in it becomes a string, with a note
    saying so (JSON has neither, and the model must not be taught otherwise)."""
    try:
        return json.dumps(value, ensure_ascii=False, default=_as_text, allow_nan=False)
    except TypeError:  # a key JSON has no form for: an Enum member's is its value
        found: list[enum.Enum] = []
        plain = _member_keys_as_values(value, found)
        if not found:
            raise
        return _json_text_of(plain)
    except ValueError as error:
        if "float" not in str(error):  # a circular structure, say: not ours to mend
            raise
        return strictjson.dumps(value)
