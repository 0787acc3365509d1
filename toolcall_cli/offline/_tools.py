"""Reading the tools the request offers: what kind of value each parameter wants."""

from __future__ import annotations

from typing import Any, Literal

from toolcall_cli.messages import ToolSpec
from toolcall_cli.offline import _lexicon as lx
from toolcall_cli.offline._words import english_words, split_identifier

ParamRole = Literal[
    "enum",
    "timezone",
    "place",
    "symbol",
    "expression",
    "text",
    "unit_from",
    "unit_to",
    "unit",
    "currency_from",
    "currency_to",
    "currency",
    "number",
    "other",
]

PLACE_WORDS = frozenset(
    lx.words(
        "city location place region country address town area loc destination 城市 地点 位置 地区"
    )
)
_SYMBOL_WORDS = frozenset(lx.words("symbol ticker 代码 股票代码"))
_EXPRESSION_WORDS = frozenset(
    lx.words("expression expr formula equation calculation math 表达式 算式")
)
_CURRENCY_WORDS = frozenset(lx.words("currency currencies ccy 货币 币种"))
_TEXT_WORDS = frozenset(
    lx.words(
        "query q text question prompt keywords keyword topic search term terms sentence 关键词 内容"
    )
)


def param_words(name: str, schema: dict[str, Any]) -> set[str]:
    description = str(schema.get("description", ""))
    words = set(split_identifier(name)) | english_words(description)
    cjk_words = PLACE_WORDS | _SYMBOL_WORDS | _EXPRESSION_WORDS | _CURRENCY_WORDS
    words |= {w for w in cjk_words if w in description}
    return words


def param_role(name: str, schema: dict[str, Any]) -> ParamRole:
    """What kind of value a parameter wants, from its name, type and description."""
    names = set(split_identifier(name))
    words = param_words(name, schema)
    kind = schema.get("type")
    if enum_values(schema):
        return "enum"
    if kind in ("number", "integer"):
        return "number"
    if names & {"timezone", "tz", "zone"}:
        return "timezone"
    if names & PLACE_WORDS:
        return "place"
    if names & _SYMBOL_WORDS or (names & {"code"} and "stock" in words):
        return "symbol"
    if names & _EXPRESSION_WORDS:
        return "expression"
    iso_example = "iso" in words and any(code in description_of(schema) for code in lx.CURRENCIES)
    if names & _CURRENCY_WORDS or words & _CURRENCY_WORDS or iso_example:
        return direction_role(names, "currency")
    if "unit" in words or "units" in words or "单位" in words:
        return direction_role(names, "unit")
    if names & _TEXT_WORDS:
        return "text"
    return description_role(words)


def description_of(schema: dict[str, Any]) -> str:
    return str(schema.get("description", ""))


def direction_role(names: set[str], kind: Literal["unit", "currency"]) -> ParamRole:
    """A unit or currency parameter: the one a value is in, the one wanted, or just one."""
    if names & {"from", "source", "src", "original", "input", "base"}:
        return "unit_from" if kind == "unit" else "currency_from"
    if names & {"to", "target", "dest", "destination", "output", "into", "quote"}:
        return "unit_to" if kind == "unit" else "currency_to"
    return kind


def description_role(words: set[str]) -> ParamRole:
    """A parameter with a vague name (`value`, `s`) is judged by its description alone."""
    if words & PLACE_WORDS:
        return "place"
    if words & _EXPRESSION_WORDS:
        return "expression"
    if words & _SYMBOL_WORDS:
        return "symbol"
    if words & _TEXT_WORDS:
        return "text"
    return "other"


def enum_values(schema: dict[str, Any]) -> list[Any]:
    if isinstance(schema.get("enum"), list):
        return list(schema["enum"])
    for option in schema.get("anyOf", []) or []:
        if isinstance(option, dict) and isinstance(option.get("enum"), list):
            return list(option["enum"])
    return []


def properties(spec: ToolSpec) -> dict[str, dict[str, Any]]:
    props = spec.parameters.get("properties", {})
    return (
        {k: v for k, v in props.items() if isinstance(v, dict)} if isinstance(props, dict) else {}
    )


def required(spec: ToolSpec) -> list[str]:
    names = spec.parameters.get("required", [])
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []
