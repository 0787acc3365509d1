"""Flag values that need no converting, passed through without pydantic.

typer (0.2x) converts every parameter's value, defaults included, through a pydantic
TypeAdapter built on first use: loading pydantic and building the adapters costs a run about
90 ms, more than the loop, the offline model and the tools together. Most values a run sees are
already what their parameter wants: the question (text), a choice's default, a number default
within its bounds. Those are passed through as they are, which is what typer's adapter returns
for them; every other value (text for a number or a choice, a path, a list, a custom parser, a
value out of bounds) goes to typer's own conversion, so its results and error messages are
typer's. With a typer that has no such adapters (older versions), nothing here applies.
"""

from __future__ import annotations

import enum
import functools
import typing
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


def pass_plain_values(params: Iterable[Any]) -> None:
    """Give each of a command's parameters a conversion that passes plain values through."""
    passing = _passing_class()
    if passing is None:
        return
    for param in params:
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is None or getattr(param, "_runtime_param", True) is not None:
            continue  # not typer's, or its conversion is already made
        if getattr(descriptor, "file_annotation", None) is not None:
            continue  # files are opened by typer's own conversion
        try:
            param._runtime_param = passing(
                parameter_info=descriptor.parameter_info,
                annotation=descriptor.annotation,
                descriptor=descriptor,
            )
        except (TypeError, AttributeError):
            # These are typer's private parts: a typer that shaped them otherwise keeps its
            # own conversion (only slower), never a broken command line.
            return


def is_plain(value: Any, annotation: Any, info: Any) -> bool:
    """Whether typer's adapter would return `value` itself for a parameter of `annotation`."""
    if getattr(info, "parser", None) is not None:
        return False
    if annotation is str:
        return type(value) is str
    if annotation in (int, float):
        low, high = getattr(info, "min", None), getattr(info, "max", None)
        return (
            type(value) is annotation
            and (low is None or value >= low)
            and (high is None or value <= high)
        )
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return isinstance(value, annotation)  # a member is its own choice
    if typing.get_origin(annotation) is typing.Literal:
        return type(value) is str and value in typing.get_args(annotation)  # one of the choices
    return False


@functools.cache
def _passing_class() -> type[Any] | None:
    """typer's RuntimeParam, extended to pass plain values through; None when typer has none."""
    try:
        from typer._coercion import RuntimeParam, build_runtime_param
    except ImportError:
        return None

    @dataclass(frozen=True)
    class PlainValuesFirst(RuntimeParam):  # type: ignore[misc, unused-ignore]
        descriptor: Any

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            if is_plain(value, self.annotation, self.parameter_info):
                return value
            typer_own = build_runtime_param(self.descriptor)
            return typer_own._coerce_value(value, param=param, ctx=ctx)

    return PlainValuesFirst
