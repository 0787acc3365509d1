"""Checking arguments against a tool's JSON Schema, which may be somebody else's (an MCP
server's), so every such check in toolcall goes through here: nothing is fetched (a `$ref`
resolves only inside the schema), and nothing is unbounded (a check ends within the time it is
given, `within`, and says so, `CheckTimedOut`). Patterns run on the `regex` module, which stops
at a deadline and lets other threads run meanwhile; the stdlib `re` can do neither, and
`^(a|aa)+$` against 60 `a`s and a `!` runs for hours with the interpreter's lock held.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import json
import queue
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar, cast

from toolcall_cli import strictjson

if TYPE_CHECKING:
    # Neither ships type information; `unused-ignore` keeps this clean if stubs are added.
    import jsonschema  # type: ignore[import-untyped, unused-ignore]
    import regex  # type: ignore[import-untyped, unused-ignore]

T = TypeVar("T")
Keyword = Callable[[Any, Any, Any, dict[str, Any]], Iterator["jsonschema.ValidationError"]]


class CheckTimedOut(Exception):
    """The arguments could not be checked against the schema in the time given."""


_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "toolcall_schema_deadline", default=None
)


@contextlib.contextmanager
def within(seconds: float | None) -> Iterator[None]:
    """Checks made inside stop with CheckTimedOut once `seconds` have passed (None: no limit).
    A check is a generator read lazily: it must be read inside too."""
    deadline = None if seconds is None else time.monotonic() + max(seconds, 0.0)
    token = _DEADLINE.set(deadline)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _time_left() -> float | None:
    """Seconds left to check in, None without a deadline; CheckTimedOut once it has passed."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return None
    left = deadline - time.monotonic()
    if left <= 0:
        raise CheckTimedOut
    return left


def bounded(check: Callable[[], T]) -> T:
    """`check()`, given no more than the time left under `within` (wall-clock time).

    Without a deadline it simply runs. With one, it runs in a daemon thread, and the caller
    waits at most the time left: the regex module counts its timeout in processor time, which a
    busy machine stretches, and a thread is never stopped from outside. Abandoned, the thread
    ends by itself soon after: at its regex timeout, or at the next keyword."""
    left = _time_left()
    if left is None:
        return check()
    context = contextvars.copy_context()  # the keywords read the deadline from it
    answer: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=1)

    def run() -> None:
        try:
            answer.put((True, context.run(check)))
        except BaseException as error:  # handed to the caller's thread, which raises it
            answer.put((False, error))

    threading.Thread(target=run, name="schema-check", daemon=True).start()
    try:
        done, value = answer.get(timeout=left)
    except queue.Empty:
        raise CheckTimedOut from None
    if not done:
        raise value
    return cast(T, value)


def validator(schema: Any) -> Any:
    """A jsonschema validator (Draft 2020-12, with toolcall's keywords) for `schema`, whose
    references resolve only inside `schema`: an empty registry retrieves nothing, so a remote or
    file `$ref` is an error (`referencing` Unresolvable), never a request or a file read."""
    from referencing import Registry

    return _validator_class()(schema, registry=Registry())


def schema_problem(schema: Any) -> str | None:
    """Why `schema` cannot check a tool's arguments, as the end of a sentence that begins "its
    input schema ..."; None when it can.

    It is not valid JSON Schema; it has a reference that does not resolve inside it (toolcall
    fetches nothing); a pattern the `regex` module cannot compile; or `patternProperties`
    beside `unevaluatedProperties`, whose check jsonschema runs on `re`, which cannot be
    stopped."""
    import jsonschema

    try:
        _validator_class().check_schema(schema)
        return _reference_problem(schema) or _pattern_problem(schema)
    except jsonschema.SchemaError as error:
        return f"is not valid JSON Schema ({error_line(error)})"
    except Exception as error:  # a schema nested past the stack, say: still one line
        return f"cannot be read ({error_line(error)})"


def error_line(error: BaseException) -> str:
    """An exception as one short line: its type and the first line of its message."""
    message = str(getattr(error, "message", "") or error)
    first = message.splitlines()[0] if message else ""
    return f"{type(error).__name__}: {first}"[:200]


_ONE_SCHEMA = ("items", "contains", "not", "if", "then", "else", "propertyNames")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "dependentSchemas")


def readable_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with each `true` or `false` where a parameter, an item or an option is written
    as the object that means the same (`{}`, `{"not": {}}`): valid JSON Schema, and what every
    reader of a tool's schema (the prompt, the offline model, coercion) expects there. Checked
    the same; `additionalProperties: false` and its like are kept as they are."""

    def readable(part: Any) -> Any:
        if part is True:
            return {}
        return {"not": {}} if part is False else part

    copied: dict[str, Any] = json.loads(json.dumps(schema))
    stack: list[Any] = [copied]
    while stack:
        current = stack.pop()
        if not isinstance(current, dict):
            continue
        for keyword in (*_ONE_SCHEMA, "additionalProperties", "unevaluatedProperties"):
            if keyword in current:
                if keyword in _ONE_SCHEMA:
                    current[keyword] = readable(current[keyword])
                stack.append(current[keyword])
        for keyword in _SCHEMA_LISTS:
            if isinstance(current.get(keyword), list):
                current[keyword] = [readable(part) for part in current[keyword]]
                stack += current[keyword]
        for keyword in _SCHEMA_MAPS:
            if isinstance(current.get(keyword), dict):
                current[keyword] = {k: readable(v) for k, v in current[keyword].items()}
                stack += current[keyword].values()
    return copied


# --- what a schema refers to and matches ------------------------------------------------------


def _subschemas(schema: Any) -> Iterator[tuple[str, Any]]:
    """Every schema inside `schema` (itself included) that a validator may evaluate, with the
    base URI its references resolve against. Keywords JSON Schema does not define are not
    entered (a validator never evaluates them either); an explicit stack, not recursion, so a
    deep schema cannot overflow it."""
    from referencing.jsonschema import DRAFT202012

    stack = [("", DRAFT202012.create_resource(schema))]
    while stack:
        base, resource = stack.pop()
        own_id = resource.id()
        if own_id is not None:
            base = urllib.parse.urljoin(base, own_id)
        yield base, resource.contents
        stack.extend((base, inner) for inner in resource.subresources())


def _reference_problem(schema: Any) -> str | None:
    """The references of `schema` that do not resolve inside it, as the validator would look
    them up (with JSON Schema's own metaschemas, which jsonschema ships and never fetches)."""
    from jsonschema_specifications import (  # type: ignore[import-untyped, unused-ignore]
        REGISTRY as SPECIFICATIONS,
    )
    from referencing import Registry
    from referencing.exceptions import Unresolvable
    from referencing.jsonschema import DRAFT202012

    root = DRAFT202012.create_resource(schema)
    registry = SPECIFICATIONS.combine(Registry()).with_resource(root.id() or "", root).crawl()
    unresolved: list[str] = []
    for base, contents in _subschemas(schema):
        if not isinstance(contents, dict):
            continue
        for keyword in ("$ref", "$dynamicRef"):
            reference = contents.get(keyword)
            if not isinstance(reference, str):
                continue
            try:
                registry.resolver(base_uri=base).lookup(reference)
            except Unresolvable:
                unresolved.append(reference)
    if not unresolved:
        return None
    shown = ", ".join(dict.fromkeys(reference[:120] for reference in unresolved[:5]))
    return (
        f"refers to {shown}, which is not in the schema itself: toolcall resolves only "
        "references inside a tool's schema, and fetches nothing"
    )


def _pattern_problem(schema: Any) -> str | None:
    uses = {"patternProperties": False, "unevaluatedProperties": False}
    for _, contents in _subschemas(schema):
        if not isinstance(contents, dict):
            continue
        for keyword in uses:
            uses[keyword] = uses[keyword] or keyword in contents
        patterns = list(contents.get("patternProperties", {}))
        if isinstance(contents.get("pattern"), str):
            patterns.append(contents["pattern"])
        for pattern in patterns:
            try:
                _compiled(pattern)
            except Exception as error:
                return f"has a pattern {pattern[:80]!r} that cannot be run ({error_line(error)})"
    if all(uses.values()):
        return (
            "has patternProperties beside unevaluatedProperties, whose patterns could not be "
            "stopped at the tool timeout"
        )
    return None


# --- the validator -------------------------------------------------------------------------


@functools.cache
def _validator_class() -> Any:
    """Draft 2020-12 with toolcall's keywords, built on first need (jsonschema takes tens of
    milliseconds to import). Every keyword checks the deadline before it runs."""
    import jsonschema

    base = jsonschema.Draft202012Validator
    keywords: dict[str, Keyword] = {
        **base.VALIDATORS,
        "anyOf": _any_of,
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
        "uniqueItems": _unique_items,
    }
    return jsonschema.validators.extend(
        base, {name: _timed(check) for name, check in keywords.items()}
    )


def _timed(check: Keyword) -> Keyword:
    def timed(
        validator: Any, value: Any, instance: Any, schema: dict[str, Any]
    ) -> Iterator[jsonschema.ValidationError]:
        _time_left()
        return check(validator, value, instance, schema)

    return timed


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> regex.Pattern[str]:
    import regex

    return regex.compile(pattern)


def _search(pattern: str, text: str) -> bool:
    """Whether `pattern` matches somewhere in `text` (as jsonschema's `re.search`), stopped at
    the deadline."""
    try:
        return _compiled(pattern).search(text, timeout=_time_left()) is not None
    except TimeoutError:
        raise CheckTimedOut from None


def _pattern(
    validator: Any, pattern: str, instance: Any, schema: dict[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    import jsonschema

    if validator.is_type(instance, "string") and not _search(pattern, instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: dict[str, Any], instance: Any, schema: dict[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for name, value in instance.items():
            if _search(pattern, name):
                yield from validator.descend(value, subschema, path=name, schema_path=pattern)


def _additional(instance: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    """The names in `instance` that neither `properties` nor `patternProperties` cover."""
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    return [
        name
        for name in instance
        if name not in properties and not any(_search(p, name) for p in patterns)
    ]


def _additional_properties(
    validator: Any, additional: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    """jsonschema's additionalProperties (its messages too), on the bounded search."""
    import jsonschema

    if not validator.is_type(instance, "object"):
        return
    extras = _additional(instance, schema)
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            message = f"{joined} {verb} not match any of the regexes: {patterns}"
            yield jsonschema.ValidationError(message)
        else:
            verb = "was" if len(extras) == 1 else "were"
            joined = ", ".join(repr(each) for each in sorted(extras, key=str))
            yield jsonschema.ValidationError(
                f"Additional properties are not allowed ({joined} {verb} unexpected)"
            )


def _unique_items(
    validator: Any, unique: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    """jsonschema's uniqueItems in one pass: its own compares every pair of objects, hours of
    work for 100,000 of them. Equal as JSON Schema says (1 equals 1.0, true does not equal 1)."""
    import jsonschema

    if not unique or not validator.is_type(instance, "array"):
        return
    seen: set[Any] = set()
    for item in instance:
        key = _json_key(item)
        if key in seen:
            yield jsonschema.ValidationError(f"{instance!r} has non-unique elements")
            return
        seen.add(key)


def _json_key(value: Any) -> Any:
    """A hashable form of a JSON value, equal exactly when the values are equal in JSON Schema."""
    if isinstance(value, bool) or value is None:
        return ("literal", value)
    if isinstance(value, (int, float)):
        return ("number", value)  # 1 == 1.0, and both hash alike
    if isinstance(value, list):
        return ("array", tuple(_json_key(item) for item in value))
    if isinstance(value, dict):
        return ("object", frozenset((name, _json_key(item)) for name, item in value.items()))
    return ("string", value)


def _any_of(
    validator: Any, any_of: list[Any], instance: Any, schema: dict[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    """jsonschema's anyOf, except that each option stops at its first error: knowing that no
    option fits is enough, and jsonschema's own checks a huge array in full for every option."""
    import jsonschema

    for index, option in enumerate(any_of):
        if next(validator.descend(instance, option, schema_path=index), None) is None:
            return
    yield jsonschema.ValidationError(
        f"{short_json(instance)} is not valid under any of the given schemas"
    )


def json_type(value: object) -> str:
    """The JSON name of a Python value's type, as a model would think of it (its Python name
    for a value JSON has no type for)."""
    return strictjson.json_type(value) or type(value).__name__


def short_json(value: object) -> str:
    """`string "Paris"`: a value's JSON type and its text, cut to 40 characters."""
    return f"{json_type(value)} {json_text(value)}"


def json_text(value: object) -> str:
    """A value as JSON, cut to 40 characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        text = json_type(value)
    return text if len(text) <= 40 else text[:37] + "..."
