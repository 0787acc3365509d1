"""Currency conversion over a fixed rate table: deterministic and offline, for the bench."""

from __future__ import annotations

import re
from typing import Any

from toolcall_cli import tool

# Units of each currency per 1 US dollar. A fixed sample table, not live rates: the bench grades
# answers against this table, so it must never change between runs.
RATES_PER_USD: dict[str, float] = {
    "USD": 1.0,
    "CNY": 7.2,
    "EUR": 0.92,
    "JPY": 150.0,
    "GBP": 0.79,
    "AUD": 1.52,
    "CAD": 1.36,
    "BRL": 5.0,
    "INR": 83.0,
    "KRW": 1350.0,
    "HKD": 7.8,
    "EGP": 48.0,
}

_NAMES: dict[str, str] = {
    "dollar": "USD",
    "us dollar": "USD",
    "usdollar": "USD",
    "美元": "USD",
    "美金": "USD",
    "$": "USD",
    "yuan": "CNY",
    "rmb": "CNY",
    "renminbi": "CNY",
    "人民币": "CNY",
    "元": "CNY",
    "¥": "CNY",
    "euro": "EUR",
    "欧元": "EUR",
    "€": "EUR",
    "yen": "JPY",
    "japanese yen": "JPY",
    "日元": "JPY",
    "日币": "JPY",
    "pound": "GBP",
    "british pound": "GBP",
    "sterling": "GBP",
    "英镑": "GBP",
    "£": "GBP",
    "australian dollar": "AUD",
    "澳元": "AUD",
    "canadian dollar": "CAD",
    "加元": "CAD",
    "real": "BRL",
    "brazilian real": "BRL",
    "雷亚尔": "BRL",
    "巴西雷亚尔": "BRL",
    "rupee": "INR",
    "indian rupee": "INR",
    "卢比": "INR",
    "won": "KRW",
    "korean won": "KRW",
    "韩元": "KRW",
    "hong kong dollar": "HKD",
    "港币": "HKD",
    "港元": "HKD",
    "egyptian pound": "EGP",
    "埃及镑": "EGP",
}


def _code(name: str) -> str:
    code = name.strip().upper()
    if code in RATES_PER_USD:
        return code
    key = re.sub(r"\s+", " ", name.strip().casefold())
    for candidate in (key, key.removesuffix("s")):  # "dollars", "euros"
        if candidate in _NAMES:
            return _NAMES[candidate]
    raise ValueError(
        f"unknown currency {name!r}. Known: {', '.join(RATES_PER_USD)} "
        "(or names such as dollar, 人民币, euro, 日元)."
    )


@tool(cacheable=True)
def convert_currency(amount: float, from_currency: str, to_currency: str) -> dict[str, Any]:
    """Convert an amount of money between currencies (货币/汇率换算) at a fixed sample rate table.

    Currencies: USD, CNY, EUR, JPY, GBP, AUD, CAD, BRL, INR, KRW, HKD, EGP; also names such as
    dollar, 美元, 人民币, euro, 欧元, yen, 日元, pound, 英镑.

    Args:
        amount: The amount of money, e.g. 100.
        from_currency: The currency of the amount, e.g. "USD" or "人民币".
        to_currency: The currency to convert to, e.g. "EUR" or "日元".
    """
    source, target = _code(from_currency), _code(to_currency)
    result = round(amount / RATES_PER_USD[source] * RATES_PER_USD[target], 2)
    return {
        "amount": amount,
        "from": source,
        "to": target,
        "result": result,
        "text": f"{amount:g} {source} = {result:.2f} {target}",
        "note": "Fixed sample rates (offline), not live rates.",
    }
