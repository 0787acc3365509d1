"""Turn a typed Python function into the ToolSpec a model sees: name, description, JSON Schema.

Descriptions come from a Google-style docstring (`Args:`) or from `Annotated[T, "text"]`.
"""

from __future__ import annotations

import enum
import inspect
import json
import re
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, Union

from toolcall_cli.messages import ToolSpec
from toolcall_cli.strictjson import json_type

JsonSchema = dict[str, Any]

TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""What OpenAI (and the servers that copy it) accept as a tool name (whole: use fullmatch)."""

_SCALARS: dict[object, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}

_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Params|Keyword Args|Returns?|Yields?|Raises|Examples?|Notes?"
    r"|See Also|Attributes):\s*$",
    re.IGNORECASE,
)
_ARG_LINE = re.compile(r"^\*{0,2}(?P<name>\w+)\s*(\([^)]*\))?\s*:\s*(?P<text>.*)$")
_ARG_SECTIONS = ("args", "arguments", "parameters", "params", "keyword args")


class ToolDefinitionError(Exception):
    """A function cannot be offered as a tool (bad name, missing or unsupported annotation)."""


class _Unsupported(Exception):
    """Raised deep inside the type walk; turned into a ToolDefinitionError with context."""


def spec_from_function(func: Callable[..., Any], *, name: str | None = None) -> ToolSpec:
    """The ToolSpec for `func`, named `name` or the function's own name."""
    func_name = getattr(func, "__name__", repr(func))
    tool_name = name or func_name
    if not TOOL_NAME.fullmatch(tool_name):
        raise ToolDefinitionError(
            f"{func_name}: tool name {tool_name!r} must be 1-64 letters, digits, '_' or '-'"
        )
    hints = _type_hints(func, func_name)
    summary, arg_docs = parse_docstring(inspect.getdoc(func) or "")
    properties: dict[str, JsonSchema] = {}
    required: list[str] = []
    for param in _parameters(func, func_name):
        if param.name not in hints:
            raise ToolDefinitionError(
                f"{func_name}: parameter `{param.name}` has no type annotation"
            )
        properties[param.name] = _parameter_schema(
            param, hints[param.name], arg_docs.get(param.name), func_name
        )
        if param.default is inspect.Parameter.empty:
            required.append(param.name)
    parameters: JsonSchema = {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    return ToolSpec(name=tool_name, description=summary, parameters=parameters)


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its summary and a description per argument."""
    summary, sections = _split_sections(inspect.cleandoc(doc))
    arg_lines = [line for name in _ARG_SECTIONS for line in sections.get(name, [])]
    return summary, _parse_args(arg_lines)


def _split_sections(doc: str) -> tuple[str, dict[str, list[str]]]:
    """The text before the first section header, and each section's lines by lower-case name."""
    summary: list[str] = []
    sections: dict[str, list[str]] = {}
    current: list[str] = summary
    for line in doc.splitlines():
        header = None if line[:1].isspace() else _SECTION.match(line.strip())
        if header:
            current = sections.setdefault(header.group(1).lower(), [])
        else:
            current.append(line)
    return inspect.cleandoc("\n".join(summary)), sections


def _parse_args(lines: list[str]) -> dict[str, str]:
    """`name: text` entries at the section's first indent; deeper lines continue an entry."""
    args: dict[str, str] = {}
    entry_indent: int | None = None
    current: str | None = None
    for line in lines:
        stripped = line.strip()
        if not stripped:
            continue
        indent = len(line) - len(line.lstrip())
        entry_indent = indent if entry_indent is None else entry_indent
        match = _ARG_LINE.match(stripped)
        if match and indent <= entry_indent:
            current = match.group("name")
            args[current] = match.group("text").strip()
        elif current is not None:
            args[current] = f"{args[current]} {stripped}".strip()
    return args


def _type_hints(func: Callable[..., Any], func_name: str) -> dict[str, Any]:
    try:
        return typing.get_type_hints(func, include_extras=True)
    except Exception as error:  # an annotation naming something undefined, a typo, ...
        raise ToolDefinitionError(
            f"{func_name}: cannot read type annotations: {type(error).__name__}: {error}"
        ) from None


def _parameters(func: Callable[..., Any], func_name: str) -> list[inspect.Parameter]:
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError) as error:
        raise ToolDefinitionError(f"{func_name}: no readable signature: {error}") from None
    for param in params:
        # Arguments arrive as one JSON object, so every parameter must be passable by name.
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            star = "*" if param.kind is param.VAR_POSITIONAL else "**"
            raise ToolDefinitionError(
                f"{func_name}: parameter `{star}{param.name}` is not supported; "
                "name each argument explicitly"
            )
        if param.kind is param.POSITIONAL_ONLY:
            raise ToolDefinitionError(
                f"{func_name}: parameter `{param.name}` is positional-only; tools are called "
                "with named arguments"
            )
    return params


def _parameter_schema(
    param: inspect.Parameter, annotation: Any, doc: str | None, func_name: str
) -> JsonSchema:
    inner, annotated_doc = _split_annotated(annotation)
    try:
        schema = schema_for_type(inner)
    except _Unsupported as error:
        raise ToolDefinitionError(
            f"{func_name}: parameter `{param.name}` has an unsupported type: {error}"
        ) from None
    description = annotated_doc or doc
    if description:
        schema["description"] = description
    if param.default is not inspect.Parameter.empty:
        default = _json_default(param.default)
        if default is not _NO_DEFAULT:
            schema["default"] = default
    return schema


def _split_annotated(annotation: Any) -> tuple[Any, str | None]:
    """`Annotated[T, "text", ...]` → (T, "text"); anything else → (annotation, None)."""
    if typing.get_origin(annotation) is typing.Annotated:
        inner, *metadata = typing.get_args(annotation)
        text = next((m for m in metadata if isinstance(m, str)), None)
        return inner, text.strip() if text else None
    return annotation, None


_NO_DEFAULT = object()


def _json_default(value: Any) -> Any:
    """The default as plain JSON, each Enum member in it (`[Color.RED]`, `{"a": Color.RED}`)
    as its value; _NO_DEFAULT when it has no JSON form (then it is not shown). The schema holds
    no member: whatever reads it, as JSON or as Python, reads "red", never Color.RED."""
    try:  # NaN and Infinity are not JSON either
        return json.loads(json.dumps(value, allow_nan=False, default=_member_value))
    except (TypeError, ValueError, RecursionError):
        return _NO_DEFAULT


def member_value(value: Any) -> Any:
    """An Enum member as its value (Color.RED is "red", as a schema offers it); anything else
    as it is. What becomes of a value JSON cannot hold is for each caller to say: a default is
    left out of the schema, a tool's result is sent as text."""
    return value.value if isinstance(value, enum.Enum) else value


def _member_value(value: Any) -> Any:
    """json.dumps' last resort for a default: a member has a JSON form, its value; nothing
    else it cannot write has one."""
    if isinstance(value, enum.Enum):
        return member_value(value)
    raise TypeError(f"{type(value).__name__} has no JSON form")


def schema_for_type(annotation: Any) -> JsonSchema:
    """The JSON Schema for one Python annotation; raises _Unsupported with a short reason."""
    annotation, _ = _split_annotated(annotation)
    if annotation is None or annotation is type(None):
        return {"type": "null"}
    if annotation in _SCALARS:
        return {"type": _SCALARS[annotation]}
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return _enum_schema([member.value for member in annotation])
    origin = typing.get_origin(annotation)
    if origin is Literal:  # Literal[Color.RED, Color.BLUE] offers "red" and "blue"
        return _enum_schema(list(map(member_value, typing.get_args(annotation))))
    if origin is Union or origin is types.UnionType:
        return _union_schema(typing.get_args(annotation))
    if annotation is list or origin is list:
        return _array_schema(typing.get_args(annotation))
    if annotation is dict or origin is dict:
        return _object_schema(typing.get_args(annotation))
    raise _Unsupported(
        f"{_type_name(annotation)} (use str, int, float, bool, Literal, Enum, "
        "list, dict or Optional of those)"
    )


def _enum_schema(values: list[Any]) -> JsonSchema:
    kinds = sorted({_json_type(v) for v in values})
    return {"type": kinds[0] if len(kinds) == 1 else kinds, "enum": values}


def _json_type(value: Any) -> str:
    name = json_type(value)
    if name in (None, "array", "object"):
        raise _Unsupported(f"Literal/Enum value {value!r} has no JSON form")
    return str(name)


def _union_schema(members: tuple[Any, ...]) -> JsonSchema:
    # None goes last so `Optional[T]` reads as "T, or null".
    ordered = [m for m in members if m is not type(None)] + [m for m in members if m is type(None)]
    return {"anyOf": [schema_for_type(member) for member in ordered]}


def _array_schema(args: tuple[Any, ...]) -> JsonSchema:
    schema: JsonSchema = {"type": "array"}
    if args and args[0] is not Any:
        schema["items"] = schema_for_type(args[0])
    return schema


def _object_schema(args: tuple[Any, ...]) -> JsonSchema:
    schema: JsonSchema = {"type": "object"}
    if not args:
        return schema
    key, value = args
    if key is not str:
        raise _Unsupported(f"dict keys must be str, not {_type_name(key)} (JSON keys are strings)")
    if value is not Any:
        schema["additionalProperties"] = schema_for_type(value)
    return schema


def _type_name(annotation: Any) -> str:
    if isinstance(annotation, type):
        return annotation.__qualname__
    return str(annotation).replace("typing.", "")
