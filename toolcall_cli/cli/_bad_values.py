"""A value the command line refused, told in one line that names the flag, what it takes and
what was given: `--strategy must be one of regex, schema, stream, not 'nope'`.

typer (0.2x) converts values through pydantic, whose messages speak of the "Input" and, for a
choice, start "Value error, ". The value and the rule broken are in the pydantic error that
caused typer's; a typer without pydantic (older versions) words its own, which are kept.
"""

from __future__ import annotations

from typing import Any

BOUNDS = {
    "greater_than_equal": ("ge", "at least"),
    "greater_than": ("gt", "above"),
    "less_than_equal": ("le", "at most"),
    "less_than": ("lt", "below"),
}
KINDS = {
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_parsing": "a number",
    "bool_parsing": "true or false",
}


def bad_value_line(error: Any) -> str | None:
    """The line for a refused value (click's BadParameter), or None to keep typer's words."""
    param = getattr(error, "param", None)
    if param is None:
        return None
    name = flag_name(param)
    choices = choices_of(param)
    found = pydantic_error(error)
    given = f", not {found['input']!r}" if found is not None and "input" in found else ""
    if choices:
        return f"{name} must be one of {', '.join(choices)}{given}"
    if found is None:
        return None
    if found.get("type") == "value_error" and "error" in found.get("ctx", {}):
        return f"{name}: {found['ctx']['error']}"  # the converter's own words, not pydantic's
    rule = rule_broken(found)
    return f"{name} must be {rule}{given}" if rule else None


def dash_hint(error: Any) -> str:
    """For an unknown option on a command that takes an argument: how to give an argument that
    starts with '-'. `toolcall run "-5+3"` said only "No such option: -5"."""
    if type(error).__name__ != "NoSuchOption" or error.ctx is None:
        return ""
    if str(error.option_name).startswith("--"):  # a mistyped flag, not a question
        return ""
    taken = [p for p in error.ctx.command.params if p.param_type_name == "argument"]
    if not taken:
        return ""
    name = flag_name(taken[0])
    return f"; a {name} that starts with '-' goes after --: {error.ctx.command_path} -- {name}"


def flag_name(param: Any) -> str:
    """An option's long name (declared first), or an argument's placeholder."""
    opts = [opt for opt in getattr(param, "opts", ()) if opt.startswith("--")]
    if getattr(param, "param_type_name", "") == "option" and opts:
        return str(opts[0])
    return str(param.metavar or param.name.upper())


def choices_of(param: Any) -> list[str]:
    """The values a flag of choices takes, as typed on the command line; [] for any other."""
    descriptor = getattr(param, "type_descriptor", None)
    choices = getattr(descriptor, "choices", None) if descriptor is not None else None
    if choices is None:  # a typer on click: a click.Choice
        choices = getattr(getattr(param, "type", None), "choices", None)
    return [str(getattr(choice, "value", choice)) for choice in choices or ()]


def pydantic_error(error: BaseException) -> dict[str, Any] | None:
    """The first of the pydantic errors behind typer's, if one is."""
    cause = error.__cause__
    errors = getattr(cause, "errors", None)
    if not callable(errors):
        return None
    found = errors()
    return dict(found[0]) if found else None


def rule_broken(found: dict[str, Any]) -> str | None:
    """What the value had to be, in words: `at least 1`, `a whole number`."""
    kind = found.get("type", "")
    if kind in BOUNDS:
        key, words = BOUNDS[kind]
        bound = found.get("ctx", {}).get(key)
        return f"{words} {bound:g}" if isinstance(bound, (int, float)) else None
    return KINDS.get(kind)
