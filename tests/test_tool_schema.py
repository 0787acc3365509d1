"""JSON Schema generation from typed functions and their docstrings."""

from __future__ import annotations

import enum
from typing import Annotated, Any, List, Literal, Optional  # noqa: UP035 (both spellings are tested)

import pytest

from toolcall_cli import tool
from toolcall_cli.tools.registry import Tool, ToolRegistry
from toolcall_cli.tools.schema import ToolDefinitionError, parse_docstring, spec_from_function


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


def props(func: Any) -> dict[str, Any]:
    properties: dict[str, Any] = spec_from_function(func).parameters["properties"]
    return properties


def test_scalar_types() -> None:
    def f(s: str, i: int, x: float, b: bool) -> None: ...

    assert props(f) == {
        "s": {"type": "string"},
        "i": {"type": "integer"},
        "x": {"type": "number"},
        "b": {"type": "boolean"},
    }


def test_literal_becomes_enum_with_type() -> None:
    def f(day: Literal["today", "tomorrow"], n: Literal[1, 2, 3]) -> None: ...

    assert props(f)["day"] == {"type": "string", "enum": ["today", "tomorrow"]}
    assert props(f)["n"] == {"type": "integer", "enum": [1, 2, 3]}


def test_enum_subclass_becomes_enum_of_values() -> None:
    def f(color: Color, level: Level = Level.LOW) -> None: ...

    assert props(f)["color"] == {"type": "string", "enum": ["red", "green"]}
    assert props(f)["level"] == {"type": "integer", "enum": [1, 2], "default": 1}


def test_lists_with_items() -> None:
    def f(
        names: list[str],
        nums: List[int],  # noqa: UP006
        anything: list,  # type: ignore[type-arg]
        days: list[Literal["a", "b"]],
    ) -> None: ...

    p = props(f)
    assert p["names"] == {"type": "array", "items": {"type": "string"}}
    assert p["nums"] == {"type": "array", "items": {"type": "integer"}}
    assert p["anything"] == {"type": "array"}
    assert p["days"] == {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}


def test_dicts_are_objects() -> None:
    def f(options: dict, scores: dict[str, float], extra: dict[str, Any]) -> None:  # type: ignore[type-arg]
        ...

    p = props(f)
    assert p["options"] == {"type": "object"}
    assert p["scores"] == {"type": "object", "additionalProperties": {"type": "number"}}
    assert p["extra"] == {"type": "object"}


def test_optional_and_union_none_are_any_of_with_null() -> None:
    def f(a: Optional[int], b: str | None = None) -> None: ...  # noqa: UP045

    p = props(f)
    assert p["a"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert p["b"] == {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}


def test_required_defaults_and_closed_object() -> None:
    def f(city: str, day: str = "today", count: int = 3) -> None: ...

    parameters = spec_from_function(f).parameters
    assert parameters["required"] == ["city"]
    assert parameters["additionalProperties"] is False
    assert parameters["type"] == "object"
    assert parameters["properties"]["day"]["default"] == "today"
    assert parameters["properties"]["count"]["default"] == 3


def test_default_without_json_form_is_not_recorded_but_still_optional() -> None:
    marker = object()

    def f(x: int = marker) -> None:  # type: ignore[assignment]
        ...

    parameters = spec_from_function(f).parameters
    assert parameters["required"] == []
    assert "default" not in parameters["properties"]["x"]


def test_docstring_description_and_args() -> None:
    def get_weather(city: str, day: str = "today") -> None:
        """Get the weather for a city.

        Works offline.

        Args:
            city: City name in Chinese or English,
                e.g. 北京 or Paris.
            day (str): Which day.

        Returns:
            A dict.
        """

    spec = spec_from_function(get_weather)
    assert spec.name == "get_weather"
    assert spec.description == "Get the weather for a city.\n\nWorks offline."
    assert spec.parameters["properties"]["city"]["description"] == (
        "City name in Chinese or English, e.g. 北京 or Paris."
    )
    assert spec.parameters["properties"]["day"]["description"] == "Which day."


def test_annotated_description_wins_over_docstring() -> None:
    def quote(
        symbol: Annotated[str, "Stock ticker, e.g. AAPL"], n: Annotated[int, "How many"] = 1
    ) -> None:
        """Quote a stock.

        Args:
            symbol: Docstring text that loses.
        """

    p = props(quote)
    assert p["symbol"] == {"type": "string", "description": "Stock ticker, e.g. AAPL"}
    assert p["n"] == {"type": "integer", "description": "How many", "default": 1}


def test_no_docstring_gives_empty_description() -> None:
    def f() -> None: ...

    spec = spec_from_function(f)
    assert spec.description == ""
    assert spec.parameters["properties"] == {}


def test_name_override() -> None:
    def f(x: int) -> None: ...

    assert spec_from_function(f, name="other_name").name == "other_name"


def no_annotation(x):  # type: ignore[no-untyped-def]
    ...


def star_args(*args: int) -> None: ...


def star_kwargs(**kwargs: int) -> None: ...


def complex_param(x: complex) -> None: ...


def any_param(x: Any) -> None: ...


def int_keys(x: dict[int, str]) -> None: ...


def set_param(x: set[int]) -> None: ...


def positional_only(x: int, /) -> None: ...


def undefined_name(x: Undefined) -> None: ...  # type: ignore[name-defined]  # noqa: F821


@pytest.mark.parametrize(
    ("func", "fragment"),
    [
        (no_annotation, "`x` has no type annotation"),
        (star_args, "`*args`"),
        (star_kwargs, "`**kwargs`"),
        (complex_param, "`x` has an unsupported type: complex"),
        (any_param, "`x` has an unsupported type"),
        (int_keys, "dict keys must be str"),
        (set_param, "`x` has an unsupported type"),
        (positional_only, "`x` is positional-only"),
        (undefined_name, "cannot read type annotations"),
    ],
)
def test_bad_definitions_raise_one_line_naming_function_and_parameter(
    func: Any, fragment: str
) -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        spec_from_function(func)
    message = str(caught.value)
    assert message.startswith(f"{func.__name__}: ")
    assert fragment in message
    assert "\n" not in message


def test_invalid_tool_name_is_refused() -> None:
    def f(x: int) -> None: ...

    with pytest.raises(ToolDefinitionError, match="tool name"):
        spec_from_function(f, name="has space")


def test_parse_docstring_ignores_other_sections() -> None:
    summary, args = parse_docstring(
        "Do a thing.\n\nArgs:\n    a: First.\n\nRaises:\n    ValueError: when bad.\n"
    )
    assert summary == "Do a thing."
    assert args == {"a": "First."}


def test_tool_decorator_bare_and_with_options_returns_the_function() -> None:
    @tool
    def plain(x: int) -> int:
        return x + 1

    @tool(name="renamed", timeout=5, dangerous=True, cacheable=False)
    def fancy(x: int) -> int:
        return x * 2

    assert plain(1) == 2
    assert fancy(2) == 4
    a, b = Tool.from_function(plain), Tool.from_function(fancy, source="x.py")
    # a tool is cacheable (repeated identical calls reuse its result) unless it says otherwise
    assert (a.name, a.timeout, a.dangerous, a.cacheable) == ("plain", None, False, True)
    assert (b.name, b.timeout, b.dangerous, b.cacheable, b.source) == (
        "renamed",
        5,
        True,
        False,
        "x.py",
    )


def test_bad_timeout_is_a_definition_error() -> None:
    @tool(timeout=-1)
    def f() -> None: ...

    with pytest.raises(ToolDefinitionError, match="timeout"):
        Tool.from_function(f)


def test_registry_keeps_load_order_and_refuses_duplicates() -> None:
    def b_tool() -> None: ...

    def a_tool() -> None: ...

    registry = ToolRegistry.from_functions(b_tool, a_tool)
    assert registry.names() == ["b_tool", "a_tool"]
    assert [t.name for t in registry] == ["b_tool", "a_tool"]
    assert [s.name for s in registry.specs()] == ["b_tool", "a_tool"]
    assert len(registry) == 2
    assert "a_tool" in registry
    assert "nope" not in registry
    assert registry.get("nope") is None
    with pytest.raises(ValueError, match="already registered"):
        registry.add(Tool.from_function(a_tool))
