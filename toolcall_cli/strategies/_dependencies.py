"""How a call names itself and the calls it waits for (`--dag`), as the strategies read them.

Text protocol: `"id"` and `"depends_on"` beside a call's name and arguments. Native calling: the
reserved arguments `_id` and `_depends_on`, offered in every tool's schema only with --dag and
taken out of the arguments before validation. Whether they are honoured is the loop's business.
"""

from __future__ import annotations

from typing import Any

from toolcall_cli.messages import ToolSpec

ID_ARGUMENT = "_id"
DEPENDS_ARGUMENT = "_depends_on"
MAX_REF_CHARS = 64


def call_ref(value: Any) -> str | None:
    """A call's own id as the model wrote it: a short string (a number is read as its text)."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    return str(value).strip()[:MAX_REF_CHARS] or None


def dependency_ids(value: Any) -> tuple[str, ...]:
    """The ids a call waits for: a list of them, or one alone; anything that is no id is kept as
    its text, so the loop can name it as an unknown id rather than drop it in silence."""
    if value is None:
        return ()
    items = value if isinstance(value, list) else [value]
    found: list[str] = []
    for item in items:
        ref = call_ref(item) or str(item)[:MAX_REF_CHARS]
        if ref not in found:
            found.append(ref)
    return tuple(found)


def split_reserved(arguments: Any) -> tuple[Any, str | None, tuple[str, ...]]:
    """Native calling with --dag: the arguments without `_id`/`_depends_on`, and what they said."""
    if not isinstance(arguments, dict) or not (
        ID_ARGUMENT in arguments or DEPENDS_ARGUMENT in arguments
    ):
        return arguments, None, ()
    rest = {k: v for k, v in arguments.items() if k not in (ID_ARGUMENT, DEPENDS_ARGUMENT)}
    return (
        rest,
        call_ref(arguments.get(ID_ARGUMENT)),
        dependency_ids(arguments.get(DEPENDS_ARGUMENT)),
    )


def with_reserved(spec: ToolSpec) -> ToolSpec:
    """The spec as native calling shows it with --dag: two optional reserved arguments more."""
    parameters = dict(spec.parameters)
    properties = dict(parameters.get("properties", {}))
    properties[ID_ARGUMENT] = {
        "type": "string",
        "description": "Optional: a short name for this call, so that another call in the same "
        "reply can use its result as {{name}} or {{name.field}} in its arguments.",
    }
    properties[DEPENDS_ARGUMENT] = {
        "type": "array",
        "items": {"type": "string"},
        "description": "Optional: the _id of each call in this reply that must finish first.",
    }
    parameters["properties"] = properties
    return ToolSpec(spec.name, spec.description, parameters)
