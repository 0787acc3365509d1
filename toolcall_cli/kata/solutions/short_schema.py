"""Kata `schema`, whiteboard-sized: the anyOf schema, one call checked against its tool.
Fails the finer coercions (booleans, arrays, enum case) and minimum/maximum: fine in an
interview, where you name them; the schema, the whitelist and errors to act on are the answer."""

from typing import Any

Json = dict[str, Any]
TYPES: Json = {"string": str, "integer": int, "number": (int, float), "boolean": bool}


def closed(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required,
            "additionalProperties": False}  # fmt: skip


def build_schema(tools: list[dict[str, Any]]) -> dict[str, Any]:
    calls = [closed({"name": {"const": t["name"]}, "arguments": {**t["parameters"],
             "additionalProperties": False}}, ["name", "arguments"]) for t in tools]  # fmt: skip
    return {"anyOf": [closed({"answer": {"type": "string"}}, ["answer"]), *calls]}


def validate_call(tools: list[Json], call: Json) -> tuple[Json, list[dict[str, str]]]:
    tool = next((t for t in tools if t["name"] == call.get("name")), None)
    if tool is None:
        return {}, [error("name", "unknown_tool", f"the tools: {[t['name'] for t in tools]}")]
    if not isinstance(call.get("arguments"), dict):
        return {}, [error("arguments", "type", "arguments must be a JSON object")]
    props = tool["parameters"].get("properties", {})
    args = {k: coerce(v, props.get(k, {}).get("type")) for k, v in call["arguments"].items()}
    need = [f for f in tool["parameters"].get("required", []) if f not in args]
    errors = [error(f, "missing", f"add the required argument {f!r}") for f in need]
    errors += [wrong for f, v in args.items() if (wrong := field_error(f, v, props))]
    return args, errors


def field_error(field: str, value: Any, props: Json) -> dict[str, str] | None:
    schema, kind = props.get(field), props.get(field, {}).get("type")
    mistyped = kind in TYPES and not isinstance(value, TYPES[kind])
    if schema is None:
        return error(field, "unexpected", f"remove {field!r}; it takes {list(props)}")
    if mistyped or (kind != "boolean" and isinstance(value, bool)):  # True is no number
        return error(field, "type", f"{field!r} must be a {kind}, not {value!r}")
    if value not in schema.get("enum", [value]):
        return error(field, "enum", f"{field!r} must be one of {schema['enum']}")
    return None


def coerce(value: Any, kind: Any) -> Any:
    """ "5" and 5.0 -> 5 for an integer, "2.5" -> 2.5 for a number; nothing else."""
    if kind in ("integer", "number") and isinstance(value, (str, float)):
        try:
            number = float(value)
        except ValueError:
            return value
        return int(number) if number.is_integer() else number if kind == "number" else value
    return value


def error(field: str, kind: str, message: str) -> dict[str, str]:
    return {"field": field, "error": kind, "message": message}
