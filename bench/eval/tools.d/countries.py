"""Country facts from a fixed sample table: capital, population, area, currency (offline)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from toolcall_cli import tool


@dataclass(frozen=True)
class Country:
    en: str
    zh: str
    capital: str
    capital_zh: str
    population: int
    area_km2: int
    currency: str
    aliases: tuple[str, ...] = ()


# Rounded figures, frozen here: the bench grades against this table, not against the world.
COUNTRIES: tuple[Country, ...] = (
    Country(
        "China",
        "中国",
        "Beijing",
        "北京",
        1_409_670_000,
        9_596_961,
        "CNY",
        ("PRC", "中华人民共和国"),
    ),
    Country("Japan", "日本", "Tokyo", "东京", 124_500_000, 377_975, "JPY"),
    Country("Australia", "澳大利亚", "Canberra", "堪培拉", 26_600_000, 7_692_024, "AUD", ("澳洲",)),
    Country("France", "法国", "Paris", "巴黎", 68_200_000, 551_695, "EUR"),
    Country("Germany", "德国", "Berlin", "柏林", 84_400_000, 357_588, "EUR"),
    Country("Brazil", "巴西", "Brasília", "巴西利亚", 203_100_000, 8_515_767, "BRL", ("Brasil",)),
    Country(
        "United States",
        "美国",
        "Washington, D.C.",
        "华盛顿",
        334_900_000,
        9_833_520,
        "USD",
        ("USA", "US", "America", "United States of America"),
    ),
    Country(
        "United Kingdom", "英国", "London", "伦敦", 68_300_000, 243_610, "GBP", ("UK", "Britain")
    ),
    Country("India", "印度", "New Delhi", "新德里", 1_428_600_000, 3_287_263, "INR"),
    Country("Canada", "加拿大", "Ottawa", "渥太华", 40_100_000, 9_984_670, "CAD"),
    Country("South Korea", "韩国", "Seoul", "首尔", 51_700_000, 100_210, "KRW", ("Korea",)),
    Country("Egypt", "埃及", "Cairo", "开罗", 105_900_000, 1_002_450, "EGP"),
)


def _key(name: str) -> str:
    return re.sub(r"[\s\-'’.,_]", "", name.casefold())


_BY_KEY: dict[str, Country] = {
    _key(name): c for c in COUNTRIES for name in (c.en, c.zh, *c.aliases)
}


@tool(cacheable=True)
def country_facts(country: str) -> dict[str, Any]:
    """Facts about a country (国家信息): capital (首都), population (人口), area, currency.

    Covers China, Japan, Australia, France, Germany, Brazil, United States, United Kingdom,
    India, Canada, South Korea and Egypt (sample data, offline).

    Args:
        country: Country name in English or Chinese, e.g. "Japan" or "日本".
    """
    found = _BY_KEY.get(_key(country))
    if found is None:
        known = ", ".join(c.en for c in COUNTRIES)
        raise ValueError(f"unknown country {country!r}. Known: {known}.")
    return {
        "country": found.en,
        "country_zh": found.zh,
        "capital": found.capital,
        "capital_zh": found.capital_zh,
        "population": found.population,
        "area_km2": found.area_km2,
        "currency": found.currency,
        "note": "Sample data (offline).",
    }
