"""Prepare one ToolCall to run (pool.py runs it): its tool looked up, its arguments coerced and
validated; or else the error ToolResult the model can learn from (nothing here raises)."""

from __future__ import annotations

import difflib
import itertools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from toolcall_cli import strictjson
from toolcall_cli.feedback import Problem, error_text
from toolcall_cli.messages import ToolCall, ToolResult, ToolSpec
from toolcall_cli.tools.coerce import MAX_RANKED_NAME_CHARS, coerce_arguments, similar_parameter
from toolcall_cli.tools.registry import Tool, ToolRegistry
from toolcall_cli.tools.validation import (
    CheckTimedOut,
    bounded,
    error_line,
    json_text,
    json_type,
    short_json,
    validator,
    within,
)

if TYPE_CHECKING:
    # jsonschema ships no stubs; `unused-ignore` keeps this clean if types-jsonschema is added.
    import jsonschema  # type: ignore[import-untyped, unused-ignore]


@dataclass(frozen=True)
class Prepared:
    """A call that may run: its tool, and arguments validated against the tool's schema."""

    tool: Tool
    arguments: dict[str, Any]
    coerced: tuple[str, ...] = ()
    """Arguments converted before validation, one note each (e.g. `n`: "5" → 5)."""
    dropped: tuple[str, ...] = ()
    """Arguments the tool does not take, left out (`drop_unexpected`)."""


def prepare(
    call: ToolCall,
    registry: ToolRegistry,
    *,
    time_limit: float | None = None,
    drop_unexpected: bool = False,
) -> Prepared | ToolResult:
    """The tool and validated arguments for `call`, or the error result that says what is wrong
    (an unknown tool, arguments that are not an object, or do not fit the schema).

    Checking the arguments stops after `time_limit` seconds (the time the call has: its tool
    timeout, or less when the run's time limit is nearer): a schema's pattern can take hours
    on a value made for it, and the call is then refused unchecked.

    `drop_unexpected`: when the only fault is arguments the tool does not take, the call is
    prepared without them (`dropped` names them) rather than refused: a weak model sends the
    same call with its extra argument again and again (calculate(expression="sqrt(2)*100",
    round="2"), three times, then the limit)."""
    found = registry.get(call.name)
    if found is None:
        return unknown_tool_result(call, registry.names())
    arguments = {} if call.arguments is None else call.arguments
    if not isinstance(arguments, dict):
        given = json_type(arguments)
        return error_result(
            call, "invalid_arguments", Problem("not_an_object", found.name, given=given)
        )
    if (held := lone_surrogate(arguments)) is not None:
        return error_result(call, "invalid_arguments", not_text(found, *held))
    arguments, coerced = coerce_arguments(found.spec, arguments)
    try:
        with within(time_limit):
            problems = argument_problems(found.spec, arguments)
    except CheckTimedOut:
        limit = f"{round(time_limit or 0.0, 1):g} s"
        return error_result(call, "timeout", Problem("unchecked", found.name, detail=limit))
    except Exception as error:  # a schema jsonschema cannot use (an MCP server's, say)
        unusable = Problem("schema_unusable", found.name, detail=error_line(error))
        return error_result(call, "invalid_arguments", unusable)
    if problems:
        kept = without_unexpected(found.spec, arguments) if drop_unexpected else None
        if kept is not None and not argument_problems(found.spec, kept):
            dropped = tuple(name for name in arguments if name not in kept)
            notes = (
                *coerced,
                *(f"`{name}` left out: {found.name} does not take it" for name in dropped),
            )
            return Prepared(found, kept, notes, dropped)
        return error_result(call, "invalid_arguments", *problems)
    return Prepared(found, arguments, tuple(coerced))


def runs_with(spec: ToolSpec, arguments: dict[str, Any]) -> dict[str, Any]:
    """What a call does, whatever way its arguments were written: coerced, those the tool does
    not take left out, and its defaults written out (5550100 and "5550100" send the same text
    message; an extra argument or a default spelt out does not make it another call)."""
    fixed, _ = coerce_arguments(spec, arguments)
    kept = without_unexpected(spec, fixed)
    fixed = fixed if kept is None else kept
    properties = spec.parameters.get("properties")
    if not isinstance(properties, dict):
        return fixed
    defaults = {
        name: schema["default"]
        for name, schema in properties.items()
        if isinstance(schema, dict) and "default" in schema
    }
    return {**defaults, **fixed}


def without_unexpected(spec: ToolSpec, arguments: dict[str, Any]) -> dict[str, Any] | None:
    """The arguments without those a tool that takes only its own does not take; None when
    there are none to leave out."""
    if spec.parameters.get("additionalProperties") is not False:
        return None
    properties = spec.parameters.get("properties") or {}
    kept = {name: value for name, value in arguments.items() if name in properties}
    return kept if len(kept) < len(arguments) else None


def error_result(call: ToolCall, kind: str, *problems: Problem) -> ToolResult:
    """An error result: its text says the problems (starting "Error: ", so that model and viewer
    see it at a glance), and it keeps them as data."""
    return ToolResult(
        call_id=call.id,
        name=call.name,
        content=error_text(*problems),
        ok=False,
        error_kind=kind,
        problems=problems,
    )


# --- bounds -----------------------------------------------------------------------------------
# Whatever the model sends (a 2 MB name, 100,000 arguments), what goes back to it is a few KB.

MAX_TOOL_NAME_CHARS = 64
"""The longest tool name OpenAI-compatible servers accept, and the registry allows."""
MAX_LISTED_TOOLS = 30
MAX_LISTED_PROBLEMS = 20
MAX_LISTED_UNEXPECTED = 10
"""Unexpected names listed at most, so a flood of them leaves room for the other problems."""
MAX_CHECKED_ERRORS = 200
"""Schema checking stops after this many errors: a 100,000-item array of wrong items would
otherwise build 100,000 errors to list 20 of them."""


def quoted_name(name: str) -> str:
    """A name the model sent, in backticks: whole, or its head and its length when no real
    name is that long."""
    if len(name) <= MAX_TOOL_NAME_CHARS:
        return f"`{name}`"
    return f"`{short_name(name)}` ({len(name):,} characters)"


# --- unknown tool -----------------------------------------------------------------------------


def unknown_tool_result(call: ToolCall, available: list[str]) -> ToolResult:
    """Name the available tools, closest to what the model asked for first."""
    result = error_result(call, "unknown_tool", unknown_tool(call.name, available))
    # The name goes back to the model too (e.g. `<tool_result name="...">`): bounded as well.
    return replace(result, name=short_name(call.name))


def unknown_tool(name: str, available: list[str]) -> Problem:
    """The problem of a call to no tool there is: what it named, and the tools there are (the
    closest first, unless the name is too long to be a misspelt one)."""
    ranked, closest = available, ""
    if len(name) <= MAX_RANKED_NAME_CHARS:  # too long to be a misspelt tool name otherwise
        ranked = rank_by_similarity(name, available)
        if ranked and difflib.SequenceMatcher(None, name, ranked[0]).ratio() >= 0.6:
            closest = ranked[0]
    listed = tuple(ranked[:MAX_LISTED_TOOLS])
    more = max(len(ranked) - MAX_LISTED_TOOLS, 0)
    if not name:
        return Problem("no_tool_named", allowed=listed, closest=closest, more=more)
    if len(name) > MAX_TOOL_NAME_CHARS:
        given, most = f"{len(name):,} characters", str(MAX_TOOL_NAME_CHARS)
        return Problem(
            "tool_name_too_long",
            short_name(name),
            given=given,
            detail=most,
            allowed=listed,
            more=more,
        )
    return Problem("unknown_tool", name, allowed=listed, closest=closest, more=more)


def short_name(name: str) -> str:
    """A name the model sent, cut to its head when no real tool name is that long."""
    return name if len(name) <= MAX_TOOL_NAME_CHARS else name[:24] + "…"


def rank_by_similarity(word: str, candidates: Iterable[str]) -> list[str]:
    """Candidates ordered from most to least similar to `word` (ties keep their order)."""
    lowered = word.casefold()

    def score(candidate: str) -> float:
        return difflib.SequenceMatcher(None, lowered, candidate.casefold()).ratio()

    return sorted(candidates, key=score, reverse=True)


# --- argument validation ----------------------------------------------------------------------


def lone_surrogate(arguments: dict[str, Any]) -> tuple[str, str] | None:
    """The first argument holding a lone surrogate (in a string or a key, at any depth), and
    that surrogate. JSON decodes `"\\ud800"` to one, but it is no character: no UTF-8 file,
    terminal or server takes it, so no tool is given it."""
    for name, value in arguments.items():
        stack: list[Any] = [name, value]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                if found := strictjson.SURROGATE.search(item):
                    return name, found.group()
            elif isinstance(item, dict):
                stack += [*item.keys(), *item.values()]
            elif isinstance(item, list):
                stack += item
    return None


def not_text(found: Tool, name: str, surrogate: str) -> Problem:
    shown = strictjson.escape_surrogates(short_name(name))
    return Problem(
        "not_text", found.name, argument=shown, given=strictjson.escape_surrogates(surrogate)
    )


def argument_problems(spec: ToolSpec, arguments: dict[str, Any]) -> list[Problem]:
    """What is wrong with `arguments`, each problem saying how to fix it; empty when valid.
    The first MAX_LISTED_PROBLEMS are listed, then how many more there are."""
    schema = spec.parameters
    properties: dict[str, Any] = schema.get("properties", {})
    missing = [n for n in schema.get("required", []) if n not in arguments]
    problems = [
        Problem(
            "missing_argument",
            spec.name,
            argument=name,
            allowed=(describe_schema(properties.get(name, {})),),
        )
        for name in missing
    ]
    unexpected = []
    if schema.get("additionalProperties") is False:
        unexpected = [name for name in arguments if name not in properties]
    listed = unexpected[:MAX_LISTED_UNEXPECTED]
    described = descriptions(properties)
    problems += [
        unexpected_argument(spec.name, name, list(properties), missing, described)
        for name in listed
    ]
    errors, unchecked = schema_errors(schema, arguments)
    room = max(MAX_LISTED_PROBLEMS - len(problems), 0)
    problems += [field_problem(spec.name, error) for error in errors[:room]]
    more = len(unexpected) - len(listed) + len(errors) - len(errors[:room])
    if more or unchecked:
        count = f"at least {more:,}" if unchecked else f"{more:,}"
        problems.append(Problem("unlisted", spec.name, given=count))
    return problems


def schema_errors(
    schema: dict[str, Any], arguments: dict[str, Any]
) -> tuple[list[jsonschema.ValidationError], bool]:
    """Schema errors by field, at most MAX_CHECKED_ERRORS; True when checking stopped there."""
    if plainly_valid(schema, arguments):
        return [], False

    def check() -> list[jsonschema.ValidationError]:
        found = (
            error
            for error in validator(schema).iter_errors(arguments)
            # Missing and unexpected names at the top are described apart, with better hints.
            if error.path or error.validator not in ("required", "additionalProperties")
        )
        return list(itertools.islice(found, MAX_CHECKED_ERRORS + 1))

    errors = bounded(check)  # within the time prepare() has, when it has a limit
    unchecked = len(errors) > MAX_CHECKED_ERRORS
    errors = sorted(errors[:MAX_CHECKED_ERRORS], key=lambda e: [str(p) for p in e.path])
    return errors, unchecked


# --- the common case without jsonschema ---------------------------------------------------------
# Loading jsonschema costs a run tens of milliseconds, more than the rest of a call's checks, and
# most calls fit a schema of plain types. plainly_valid() says True only when jsonschema would
# find no error; anything it does not know for sure (an unknown keyword, a $ref, a bound) is
# left to jsonschema, so the errors a model reads always come from jsonschema.

_TYPE_CHECKS: dict[str, Callable[[Any], bool]] = {
    # As jsonschema's Draft 2020-12 type checker decides them.
    "string": lambda value: isinstance(value, str),
    "integer": lambda value: (
        (isinstance(value, int) and not isinstance(value, bool))
        or (isinstance(value, float) and value.is_integer())
    ),
    "number": lambda value: isinstance(value, (int, float)) and not isinstance(value, bool),
    "boolean": lambda value: isinstance(value, bool),
    "null": lambda value: value is None,
    "array": lambda value: isinstance(value, list),
    "object": lambda value: isinstance(value, dict),
}
_DESCRIPTIVE = frozenset(
    {"description", "title", "default", "examples", "$comment", "deprecated", "format"}
)
"""Keywords that assert nothing here (`format` neither: no format checker is given)."""
_CHECKED = frozenset(
    {"type", "enum", "properties", "required", "additionalProperties", "items", "anyOf"}
)


def plainly_valid(schema: Any, instance: Any) -> bool:
    """True when `instance` certainly fits `schema`, judged on plain keywords only; False when
    it does not, or when telling needs jsonschema.

    The whole schema is checked to be plain first: inside an anyOf, an option that cannot be
    judged here (an unknown type) must not read as "does not fit" while another fits, since
    jsonschema would refuse such a schema outright."""
    return _plain(schema) and _fits(schema, instance)


def _plain(schema: Any) -> bool:
    """Whether every part of `schema` uses only the keywords and forms judged here."""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict) or not schema.keys() <= _CHECKED | _DESCRIPTIVE:
        return False
    return _plain_keywords(schema) and _plain_parts(schema)


def _plain_keywords(schema: dict[str, Any]) -> bool:
    """The schema's own keywords have the shapes the fast path reads."""
    names = _type_names(schema)
    required = schema.get("required", [])
    return (
        isinstance(names, list)
        and all(name in _TYPE_CHECKS for name in names)
        and isinstance(schema.get("enum", []), list)
        and isinstance(required, list)
        and all(isinstance(name, str) for name in required)
        and isinstance(schema.get("additionalProperties", True), bool)
    )


def _plain_parts(schema: dict[str, Any]) -> bool:
    """Its properties, items and options are plain too."""
    properties = schema.get("properties", {})
    options = schema.get("anyOf", [True])
    return (
        isinstance(properties, dict)
        and all(_plain(sub) for sub in properties.values())
        and _plain(schema.get("items", True))
        and isinstance(options, list)
        and bool(options)
        and all(_plain(option) for option in options)
    )


def _type_names(schema: dict[str, Any]) -> Any:
    """The schema's `type` as a list of names (a list unless the schema is not plain)."""
    named = schema.get("type", [])
    return [named] if isinstance(named, str) else named


# The _fits checks read a schema _plain() accepted, whole: its shapes are not checked again.


def _fits(schema: Any, instance: Any) -> bool:
    if isinstance(schema, bool):
        return schema
    return all(
        check(schema, instance)
        for check in (_fits_type, _fits_enum, _fits_object, _fits_items, _fits_any_of)
    )


def _fits_type(schema: dict[str, Any], instance: Any) -> bool:
    if "type" not in schema:
        return True
    return any(_TYPE_CHECKS[name](instance) for name in _type_names(schema))


def _fits_enum(schema: dict[str, Any], instance: Any) -> bool:
    if "enum" not in schema:
        return True
    # Only text is compared here: jsonschema's equality of 1, 1.0 and True is its own.
    return isinstance(instance, str) and any(
        isinstance(choice, str) and choice == instance for choice in schema["enum"]
    )


def _fits_object(schema: dict[str, Any], instance: Any) -> bool:
    if not isinstance(instance, dict):
        return True  # these keywords say nothing about anything else
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    if not schema.get("additionalProperties", True) and not instance.keys() <= properties.keys():
        return False
    return all(name in instance for name in required) and all(
        _fits(properties[name], value) for name, value in instance.items() if name in properties
    )


def _fits_items(schema: dict[str, Any], instance: Any) -> bool:
    if "items" not in schema or not isinstance(instance, list):
        return True
    return all(_fits(schema["items"], item) for item in instance)


def _fits_any_of(schema: dict[str, Any], instance: Any) -> bool:
    if "anyOf" not in schema:
        return True
    return any(_fits(option, instance) for option in schema["anyOf"])


def unexpected_argument(
    tool: str,
    name: str,
    allowed: list[str],
    missing: Sequence[str] = (),
    described: Mapping[str, str] | None = None,
) -> Problem:
    meant = similar_parameter(name, allowed, list(missing), described)
    given = quoted_name(name)
    if meant is not None:
        return Problem(
            "misnamed_argument", tool, short_name(name), given, tuple(allowed), closest=meant
        )
    return Problem("unexpected_argument", tool, short_name(name), given, tuple(allowed))


def descriptions(properties: Mapping[str, Any]) -> dict[str, str]:
    """Each parameter's description: the rename hint also looks for the name's words there."""
    return {n: str(s.get("description", "")) for n, s in properties.items() if isinstance(s, dict)}


def field_problem(tool: str, error: jsonschema.ValidationError) -> Problem:
    where = field_path(error.path) if error.path else ""
    got = error.instance
    if error.validator == "type":
        kinds = error.validator_value
        allowed = (kinds,) if isinstance(kinds, str) else tuple(kinds)
        return Problem("wrong_type", tool, where, json_type(got), allowed)
    if error.validator == "enum":
        choices = tuple(json.dumps(v, ensure_ascii=False) for v in error.validator_value)
        return Problem("not_allowed", tool, where, json_text(got), choices)
    if error.validator == "anyOf":
        options = tuple(describe_schema(s) for s in error.validator_value)
        return Problem("no_option_fits", tool, where, short_json(got), options)
    return Problem("invalid_value", tool, where, detail=error.message)


def field_path(path: Iterable[Any]) -> str:
    """`nums[2]`, `options.unit`: the way a developer would write the field."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def describe_schema(schema: Any) -> str:
    """A short human form of a parameter schema, for messages."""
    if not isinstance(schema, dict):
        return "any value" if schema is not False else "no value"
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"])
    if "anyOf" in schema:
        return " or ".join(describe_schema(s) for s in schema["anyOf"])
    if schema.get("type") == "array" and "items" in schema:
        return f"array of {describe_schema(schema['items'])}"
    kinds = schema.get("type", "any value")
    return kinds if isinstance(kinds, str) else " or ".join(kinds)
