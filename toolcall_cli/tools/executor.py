"""Run one ToolCall against the registry: look up, validate, run with a timeout, report.

Every failure becomes an error ToolResult the model can learn from; nothing here raises.
"""

from __future__ import annotations

import difflib
import json
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

# jsonschema ships no stubs; `unused-ignore` keeps this clean if types-jsonschema is added.
import jsonschema  # type: ignore[import-untyped, unused-ignore]

from toolcall_cli.messages import ToolCall, ToolResult, ToolSpec
from toolcall_cli.tools.coerce import coerce_arguments, similar_parameter
from toolcall_cli.tools.registry import Tool, ToolRegistry

ERROR_PREFIX = "Error: "


def execute(call: ToolCall, registry: ToolRegistry, *, default_timeout: float = 10.0) -> ToolResult:
    """Run `call` and return its result; errors come back as results, never as exceptions."""
    started = time.perf_counter()
    result = _execute(call, registry, default_timeout)
    return replace(result, duration=time.perf_counter() - started)


def _execute(call: ToolCall, registry: ToolRegistry, default_timeout: float) -> ToolResult:
    found = registry.get(call.name)
    if found is None:
        return unknown_tool_result(call, registry.names())
    arguments = {} if call.arguments is None else call.arguments
    if not isinstance(arguments, dict):
        return error_result(call, "invalid_arguments", not_an_object(found, arguments))
    arguments, coerced = coerce_arguments(found.spec, arguments)
    problems = argument_problems(found.spec, arguments)
    if problems:
        return error_result(call, "invalid_arguments", invalid_arguments_text(found, problems))
    result = run_tool(found, call, arguments, timeout=found.timeout or default_timeout)
    return replace(result, coerced=tuple(coerced)) if coerced else result


def error_result(call: ToolCall, kind: str, message: str) -> ToolResult:
    """An error result; its text starts with "Error: " so model and viewer see it at a glance."""
    return ToolResult(
        call_id=call.id, name=call.name, content=ERROR_PREFIX + message, ok=False, error_kind=kind
    )


# --- unknown tool -----------------------------------------------------------------------------


def unknown_tool_result(call: ToolCall, available: list[str]) -> ToolResult:
    """Name the available tools, closest to what the model asked for first."""
    asked = f"unknown tool `{call.name}`." if call.name else "the call names no tool."
    if not available:
        return error_result(call, "unknown_tool", f"{asked} No tools are available.")
    ranked = rank_by_similarity(call.name, available)
    hint = ""
    if difflib.SequenceMatcher(None, call.name, ranked[0]).ratio() >= 0.6:
        hint = f" Did you mean `{ranked[0]}`?"
    listing = ", ".join(ranked)
    return error_result(call, "unknown_tool", f"{asked}{hint} Available tools: {listing}.")


def rank_by_similarity(word: str, candidates: Iterable[str]) -> list[str]:
    """Candidates ordered from most to least similar to `word` (ties keep their order)."""
    lowered = word.casefold()

    def score(candidate: str) -> float:
        return difflib.SequenceMatcher(None, lowered, candidate.casefold()).ratio()

    return sorted(candidates, key=score, reverse=True)


# --- argument validation ----------------------------------------------------------------------


def not_an_object(found: Tool, arguments: object) -> str:
    return (
        f"invalid arguments for `{found.name}`: arguments must be a JSON object "
        f'(e.g. {{"name": value}}), got {json_type(arguments)}.'
    )


def invalid_arguments_text(found: Tool, problems: list[str]) -> str:
    lines = [f"invalid arguments for `{found.name}`:"]
    lines += [f"- {problem}" for problem in problems]
    lines.append(f"Fix these and call `{found.name}` again.")
    return "\n".join(lines)


def argument_problems(spec: ToolSpec, arguments: dict[str, Any]) -> list[str]:
    """Every problem with `arguments`, one line each, saying how to fix it; [] when valid."""
    schema = spec.parameters
    properties: dict[str, Any] = schema.get("properties", {})
    problems = [
        f"missing required argument `{name}` ({describe_schema(properties.get(name, {}))}): add it"
        for name in schema.get("required", [])
        if name not in arguments
    ]
    if schema.get("additionalProperties") is False:
        missing = [n for n in schema.get("required", []) if n not in arguments]
        problems += [
            unexpected_argument(name, list(properties), missing, descriptions(properties))
            for name in arguments
            if name not in properties
        ]
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(arguments), key=lambda e: [str(p) for p in e.path])
    for error in errors:
        # Missing and unexpected names at the top are described above, with better hints.
        if error.path or error.validator not in ("required", "additionalProperties"):
            problems.append(field_problem(error))
    return problems


def unexpected_argument(
    name: str,
    allowed: list[str],
    missing: Sequence[str] = (),
    described: Mapping[str, str] | None = None,
) -> str:
    meant = similar_parameter(name, allowed, list(missing), described)
    if meant is not None:
        text = f"unexpected argument `{name}`: did you mean `{meant}`? Rename it"
    else:
        text = f"unexpected argument `{name}`: remove it"
    listing = ", ".join(f"`{a}`" for a in allowed) if allowed else "none"
    return f"{text}; allowed arguments: {listing}"


def descriptions(properties: Mapping[str, Any]) -> dict[str, str]:
    """Each parameter's description: the rename hint also looks for the name's words there."""
    return {n: str(s.get("description", "")) for n, s in properties.items() if isinstance(s, dict)}


def field_problem(error: jsonschema.ValidationError) -> str:
    where = f"`{field_path(error.path)}`" if error.path else "arguments"
    got = error.instance
    if error.validator == "type":
        return f"{where} should be {describe_types(error.validator_value)}, got {json_type(got)}"
    if error.validator == "enum":
        choices = ", ".join(json.dumps(v, ensure_ascii=False) for v in error.validator_value)
        return f"{where} must be one of {choices}; got {json.dumps(got, ensure_ascii=False)}"
    if error.validator == "anyOf":
        options = " or ".join(describe_schema(s) for s in error.validator_value)
        return f"{where} should be {options}, got {_short_json(got)}"
    return f"{where}: {error.message}"


def field_path(path: Iterable[Any]) -> str:
    """`nums[2]`, `options.unit`: the way a developer would write the field."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def describe_schema(schema: dict[str, Any]) -> str:
    """A short human form of a parameter schema, for messages."""
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"])
    if "anyOf" in schema:
        return " or ".join(describe_schema(s) for s in schema["anyOf"])
    if schema.get("type") == "array" and "items" in schema:
        return f"array of {describe_schema(schema['items'])}"
    return describe_types(schema.get("type", "any value"))


def describe_types(kinds: str | list[str]) -> str:
    return kinds if isinstance(kinds, str) else " or ".join(kinds)


def json_type(value: object) -> str:
    """The JSON name of a Python value's type, as a model would think of it."""
    if value is None:
        return "null"
    for python_type, name in _JSON_TYPES:
        if isinstance(value, python_type):
            return name
    return type(value).__name__


_JSON_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),  # before int: True is an int too
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
)


def _short_json(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return f"{json_type(value)} {text if len(text) <= 40 else text[:37] + '...'}"


# --- running ----------------------------------------------------------------------------------


@dataclass
class _Outcome:
    value: Any = None
    error: BaseException | None = None


def run_tool(
    found: Tool, call: ToolCall, arguments: dict[str, Any], *, timeout: float
) -> ToolResult:
    """Call the tool's function with validated arguments in a thread, up to `timeout` seconds."""
    outcome = _Outcome()
    done = threading.Event()

    def target() -> None:
        try:
            outcome.value = found.func(**arguments)
        except BaseException as error:  # even SystemExit must not end the run
            outcome.error = error
        finally:
            done.set()

    # A daemon thread, not a ThreadPoolExecutor: pool threads are joined at interpreter exit,
    # so a hung tool would keep the process alive. Python cannot kill a thread, so on timeout
    # the thread is abandoned and keeps running in the background until it returns (or the
    # process exits); its late result is dropped.
    worker = threading.Thread(target=target, name=f"tool:{found.name}", daemon=True)
    worker.start()
    if not done.wait(timeout):
        return error_result(call, "timeout", f"`{found.name}` timed out after {timeout:g} s.")
    if outcome.error is not None:
        return error_result(call, "tool_error", exception_text(outcome.error))
    return success_result(call, outcome.value)


def exception_text(error: BaseException) -> str:
    """`ValueError: <message>`: the message is how the tool tells the model what to fix."""
    message = str(error)
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def success_result(call: ToolCall, value: object) -> ToolResult:
    try:
        content = result_text(value)
    except (TypeError, ValueError) as error:  # e.g. a circular structure
        return error_result(
            call, "tool_error", f"the result could not be turned into text: {error}"
        )
    return ToolResult(call_id=call.id, name=call.name, content=content)


def result_text(value: object) -> str:
    """What the model reads: strings as they are, everything else as JSON (None → "null")."""
    # default=str: a date or a set is better shown as text than refused.
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    # Lone surrogates (from bytes decoded with surrogateescape) cannot be sent as UTF-8.
    return text.encode("utf-8", "replace").decode("utf-8")
