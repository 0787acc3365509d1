"""Calls that use another call's result, as the request teaches them: the example pair of calls
in a text prompt (a call with an id, a call whose argument holds a placeholder for it), or the
reserved arguments a native request adds to every tool's schema. Nothing here is a constant of
the engine: another key name or placeholder syntax in the request is what the model writes.

Also how the model reads its own placeholders back once the results are in."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolcall_cli.messages import ToolSpec
from toolcall_cli.offline._words import properties, required

_MIRROR = {"{": "}", "[": "]", "(": ")", "<": ">"}


@dataclass(frozen=True)
class DependencyFormat:
    """How a call names itself, lists the calls it waits for, and refers to their results."""

    id_key: str
    depends_key: str | None
    """None when the request shows no such list (a placeholder alone makes a call wait)."""
    opening: str
    separator: str
    closing: str
    reserved: bool = False
    """Native calling: the id and the list are arguments of the call, not keys beside them."""

    def placeholder(self, ref: str, path: str = "") -> str:
        inner = f"{ref}{self.separator}{path}" if path else ref
        return f"{self.opening}{inner}{self.closing}"

    def pattern(self) -> re.Pattern[str]:
        """A placeholder: `{{ref}}` or `{{ref.path}}` in this request's syntax."""
        return re.compile(
            re.escape(self.opening)
            + r"(?P<ref>[A-Za-z0-9_-]+)"
            + rf"(?:{re.escape(self.separator)}(?P<path>[A-Za-z0-9_.\[\]]+))?"
            + re.escape(self.closing)
        )


def placeholder_shape(text: str, ref: str) -> tuple[str, str, str] | None:
    """(opening, separator, closing) of a placeholder for `ref` written as `text`, such as
    `{{a.high}}`; the closing must mirror the opening (`${` … `}`), so that "(e.g." is none."""
    found = re.fullmatch(
        rf"(?P<open>[^\w\s]{{1,3}}){re.escape(ref)}"
        r"(?:(?P<sep>[^\w\s])[A-Za-z_]\w*)?(?P<close>[^\w\s]{1,3})",
        text,
    )
    if found is None:
        return None
    closing = "".join(_MIRROR[c] for c in reversed(found["open"]) if c in _MIRROR)
    if not closing or found["close"] != closing:
        return None
    return found["open"], found["sep"] or ".", found["close"]


def from_prompt(prompt: str, open_tag: str, close_tag: str) -> DependencyFormat | None:
    """The format of the prompt's example pair: a call with a short name under some key, and a
    later call whose argument is a placeholder for that name (and maybe a list holding it)."""
    pattern = re.escape(open_tag) + r"(.*?)" + re.escape(close_tag)
    examples = [
        e for e in map(decode, re.findall(pattern, prompt, re.S)) if isinstance(e, dict) and e
    ]
    for first in examples:
        for key, ref in first.items():
            if key in ("name", "arguments") or not isinstance(ref, str) or not ref.strip():
                continue
            for second in examples:
                values = strings_in(second.get("arguments"))
                shape = next((s for v in values if (s := placeholder_shape(v, ref))), None)
                if second is first or shape is None:
                    continue
                depends = next(
                    (k for k, v in second.items() if isinstance(v, list) and ref in v), None
                )
                return DependencyFormat(key, depends, *shape)
    return None


_DESCRIBED_RE = re.compile(r"([^\w\s]{1,3})([A-Za-z]\w*)([.:/])([A-Za-z]\w*)([^\w\s]{1,3})")


def from_schemas(tools: Sequence[ToolSpec]) -> DependencyFormat | None:
    """Native calling: an optional string argument whose description shows how to refer to a
    call's result (`{{name.field}}`) is the call's own name; an optional list argument whose
    description names that one is the list of calls to wait for."""
    for spec in tools:
        optional = {n: s for n, s in properties(spec).items() if n not in required(spec)}
        for name, schema in optional.items():
            shape = described_shape(str(schema.get("description", "")))
            if schema.get("type") != "string" or shape is None:
                continue
            depends = next(
                (
                    other
                    for other, s in optional.items()
                    if s.get("type") == "array" and name in str(s.get("description", ""))
                ),
                None,
            )
            return DependencyFormat(name, depends, *shape, reserved=True)
    return None


def described_shape(description: str) -> tuple[str, str, str] | None:
    for found in _DESCRIBED_RE.finditer(description):
        opening, ref, separator, field, closing = found.groups()
        shape = placeholder_shape(f"{opening}{ref}{separator}{field}{closing}", ref)
        if shape is not None:
            return shape
    return None


def without_reserved(parameters: dict[str, Any], fmt: DependencyFormat | None) -> dict[str, Any]:
    """A tool's parameters as the model plans with them: the reserved arguments are about the
    calls, not about the tool."""
    if fmt is None or not fmt.reserved or not isinstance(parameters.get("properties"), dict):
        return parameters
    reserved = {fmt.id_key, fmt.depends_key}
    properties = {k: v for k, v in parameters["properties"].items() if k not in reserved}
    return {**parameters, "properties": properties}


def decode(content: str) -> Any:
    """A JSON value, or the text itself when it is not JSON."""
    try:
        return json.loads(content)
    except ValueError:
        return content


def strings_in(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings_in(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings_in(v)]
    return []


def links(fields: Mapping[str, Any], fmt: DependencyFormat) -> dict[str, Any]:
    """A call's own name and the calls it waits for, as its payload or its reserved arguments
    give them (the `ref` and `depends_on` of a planned call)."""
    ref = fields.get(fmt.id_key)
    waits = fields.get(fmt.depends_key or "")
    items = waits if isinstance(waits, list) else [] if waits is None else [waits]
    return {
        "ref": str(ref) if isinstance(ref, (str, int)) and str(ref).strip() else None,
        "depends_on": tuple(dict.fromkeys(str(item) for item in items)),
    }


_MISSING = object()


def resolved(
    arguments: dict[str, Any], results: Mapping[str, str], fmt: DependencyFormat
) -> dict[str, Any] | None:
    """The arguments with each placeholder put in from the results of the calls it names, as
    the engine did before the call ran; None when one cannot be (its call failed or holds no
    such field: the call was skipped)."""
    pattern = fmt.pattern()
    out: dict[str, Any] = {}
    for name, value in arguments.items():
        matches = list(pattern.finditer(value)) if isinstance(value, str) else []
        found = [lookup(m, results) for m in matches]
        if any(part is _MISSING for part in found):
            return None
        if len(matches) == 1 and matches[0][0] == value:
            out[name] = found[0]  # a whole argument takes the value itself, of its own type
            continue
        for match, part in zip(matches, found, strict=True):
            shown = part if isinstance(part, str) else json.dumps(part, ensure_ascii=False)
            value = value.replace(match[0], shown, 1)
        out[name] = value
    return out


def lookup(match: re.Match[str], results: Mapping[str, str]) -> Any:
    result = results.get(match["ref"])
    if result is None:
        return _MISSING
    value = decode(result)
    for field, index in re.findall(r"\.?([A-Za-z_]\w*)|\[(\d+)\]", match["path"] or ""):
        if field and isinstance(value, dict) and field in value:
            value = value[field]
        elif index and isinstance(value, list) and int(index) < len(value):
            value = value[int(index)]
        else:
            return _MISSING
    return value
