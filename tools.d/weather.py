"""Weather from a built-in sample table of cities: deterministic and offline, for demos."""

from __future__ import annotations

import difflib
import re
import zlib
from dataclasses import dataclass
from typing import Any, Literal

from toolcall_cli import tool

Climate = Literal["temperate", "humid", "tropical", "arid", "cold", "oceanic", "highland"]


@dataclass(frozen=True)
class City:
    zh: str
    en: str
    country: str
    temp_c: int
    """A typical temperature for the sample; each day varies around it."""
    climate: Climate
    aliases: tuple[str, ...] = ()
    chinese_city: bool = False


CITIES: tuple[City, ...] = (
    City("北京", "Beijing", "China", 8, "temperate", ("Peking", "京"), True),
    City("上海", "Shanghai", "China", 15, "humid", ("沪", "申"), True),
    City("广州", "Guangzhou", "China", 24, "humid", ("Canton", "穗"), True),
    City("深圳", "Shenzhen", "China", 25, "humid", ("鹏城",), True),
    City("杭州", "Hangzhou", "China", 16, "humid", (), True),
    City("成都", "Chengdu", "China", 14, "humid", ("蓉",), True),
    City("重庆", "Chongqing", "China", 17, "humid", ("渝", "Chungking"), True),
    City("武汉", "Wuhan", "China", 15, "humid", (), True),
    City("西安", "Xi'an", "China", 11, "temperate", ("Xian",), True),
    City("南京", "Nanjing", "China", 14, "humid", ("Nanking",), True),
    City("天津", "Tianjin", "China", 7, "temperate", (), True),
    City("青岛", "Qingdao", "China", 10, "temperate", ("Tsingtao",), True),
    City("哈尔滨", "Harbin", "China", -14, "cold", (), True),
    City("沈阳", "Shenyang", "China", -4, "cold", (), True),
    City("昆明", "Kunming", "China", 17, "highland", ("春城",), True),
    City("拉萨", "Lhasa", "China", 4, "highland", (), True),
    City("乌鲁木齐", "Urumqi", "China", -7, "arid", ("Ürümqi",), True),
    City("厦门", "Xiamen", "China", 21, "humid", ("Amoy",), True),
    City("三亚", "Sanya", "China", 28, "tropical", (), True),
    City("香港", "Hong Kong", "China", 23, "humid", ("HK", "香港特别行政区"), True),
    City("台北", "Taipei", "China", 21, "humid", ("臺北",), True),
    City("东京", "Tokyo", "Japan", 13, "humid", ("東京",)),
    City("首尔", "Seoul", "South Korea", 6, "temperate", ("汉城",)),
    City("新加坡", "Singapore", "Singapore", 30, "tropical"),
    City("曼谷", "Bangkok", "Thailand", 32, "tropical"),
    City("新德里", "New Delhi", "India", 26, "arid", ("Delhi", "德里")),
    City("迪拜", "Dubai", "United Arab Emirates", 33, "arid"),
    City("莫斯科", "Moscow", "Russia", -6, "cold"),
    City("伦敦", "London", "United Kingdom", 9, "oceanic"),
    City("巴黎", "Paris", "France", 11, "oceanic"),
    City("柏林", "Berlin", "Germany", 6, "temperate"),
    City("罗马", "Rome", "Italy", 15, "temperate", ("Roma",)),
    City("马德里", "Madrid", "Spain", 13, "arid"),
    City("纽约", "New York", "United States", 7, "temperate", ("NYC", "New York City", "纽约市")),
    City("洛杉矶", "Los Angeles", "United States", 19, "arid", ("LA", "L.A.")),
    City("旧金山", "San Francisco", "United States", 14, "oceanic", ("SF", "三藩市")),
    City("芝加哥", "Chicago", "United States", 1, "temperate"),
    City("斯普林菲尔德", "Springfield", "United States", 4, "temperate"),
    City("多伦多", "Toronto", "Canada", -2, "cold"),
    City("温哥华", "Vancouver", "Canada", 7, "oceanic"),
    City("悉尼", "Sydney", "Australia", 23, "oceanic", ("雪梨",)),
    City("墨尔本", "Melbourne", "Australia", 18, "oceanic"),
    City("开罗", "Cairo", "Egypt", 24, "arid"),
    City("开普敦", "Cape Town", "South Africa", 21, "oceanic"),
    City("里约热内卢", "Rio de Janeiro", "Brazil", 28, "tropical", ("Rio", "里约")),
    City("墨西哥城", "Mexico City", "Mexico", 17, "highland"),
    City("雷克雅未克", "Reykjavik", "Iceland", -1, "cold", ("Reykjavík",)),
)

# (English, Chinese) conditions each climate tends to have; picked per city and day.
_CONDITIONS: dict[Climate, tuple[tuple[str, str], ...]] = {
    "temperate": (
        ("Sunny", "晴"),
        ("Partly cloudy", "多云"),
        ("Overcast", "阴"),
        ("Light rain", "小雨"),
        ("Windy", "有风"),
    ),
    "humid": (
        ("Cloudy", "多云"),
        ("Light rain", "小雨"),
        ("Overcast", "阴"),
        ("Showers", "阵雨"),
        ("Sunny", "晴"),
    ),
    "tropical": (
        ("Sunny", "晴"),
        ("Thunderstorms", "雷阵雨"),
        ("Partly cloudy", "多云"),
        ("Showers", "阵雨"),
    ),
    "arid": (("Sunny", "晴"), ("Clear", "晴朗"), ("Hazy", "霾"), ("Partly cloudy", "多云")),
    "cold": (
        ("Snow", "小雪"),
        ("Overcast", "阴"),
        ("Sunny", "晴"),
        ("Light snow", "小雪"),
        ("Cloudy", "多云"),
    ),
    "oceanic": (
        ("Light rain", "小雨"),
        ("Overcast", "阴"),
        ("Partly cloudy", "多云"),
        ("Drizzle", "毛毛雨"),
        ("Sunny", "晴"),
    ),
    "highland": (
        ("Sunny", "晴"),
        ("Partly cloudy", "多云"),
        ("Clear", "晴朗"),
        ("Showers", "阵雨"),
    ),
}
_HUMIDITY: dict[Climate, int] = {
    "temperate": 45,
    "humid": 72,
    "tropical": 78,
    "arid": 25,
    "cold": 60,
    "oceanic": 76,
    "highland": 40,
}
_WIND = (
    ("N", "北风"),
    ("NE", "东北风"),
    ("E", "东风"),
    ("SE", "东南风"),
    ("S", "南风"),
    ("SW", "西南风"),
    ("W", "西风"),
    ("NW", "西北风"),
)

_NOTE = "Sample data from toolcall's built-in table (offline), not a live forecast."


def _key(name: str) -> str:
    """Case, spaces and punctuation do not matter: "new york", "New-York", "NEWYORK"."""
    return re.sub(r"[\s\-'’.·,_]", "", name.casefold())


def _names(city: City) -> list[str]:
    names = [city.zh, city.en, *city.aliases]
    if city.chinese_city:
        names.append(city.zh + "市")
    return names


_BY_KEY: dict[str, City] = {_key(name): city for city in CITIES for name in _names(city)}


def _variation(city: City, day: str, what: str, size: int) -> int:
    """A stable pseudo-random number in [0, size): crc32, unlike hash(), is the same every run."""
    return zlib.crc32(f"{city.en}|{day}|{what}".encode()) % size


def _report(city: City, day: str) -> dict[str, Any]:
    temp = city.temp_c + _variation(city, day, "temp", 7) - 3
    high = temp + 2 + _variation(city, day, "high", 5)
    low = temp - 3 - _variation(city, day, "low", 5)
    options = _CONDITIONS[city.climate]
    condition_en, condition_zh = options[_variation(city, day, "sky", len(options))]
    if temp <= 0 and "rain" in condition_en.lower():
        condition_en, condition_zh = "Light snow", "小雪"
    humidity = min(98, max(8, _HUMIDITY[city.climate] + _variation(city, day, "hum", 21) - 10))
    direction_en, direction_zh = _WIND[_variation(city, day, "wdir", len(_WIND))]
    speed = 5 + _variation(city, day, "wspd", 26)
    return {
        "city": city.en,
        "city_zh": city.zh,
        "country": city.country,
        "day": day,
        "condition": condition_en,
        "condition_zh": condition_zh,
        "temp_c": temp,
        "high_c": high,
        "low_c": low,
        "humidity": humidity,
        "wind": f"{direction_en} {speed} km/h",
        "wind_zh": f"{direction_zh} {speed} 公里/小时",
        "note": _NOTE,
    }


def _find_city(name: str) -> City | None:
    found = _BY_KEY.get(_key(name))
    if found is None and "," in name:  # "Paris, France", "北京, 中国"
        found = _BY_KEY.get(_key(name.split(",")[0]))
    return found


def _cities_inside(text: str) -> list[str]:
    """The table's cities that a longer text names, one name each, in the text's order:
    "weather in New York City" gives New York City; 东京的天气 gives 东京. A Latin name counts as
    a whole word only, and a short one (LA, SF, Rio) only as written: "la météo à Lyon" names no
    city. A one-character alias such as 京 is too short to tell."""
    found = []
    for city in CITIES:
        named = [name for name in _names(city) if _named_in(name, text)]
        if named:
            found.append(max(named, key=len))
    return sorted(found, key=lambda name: text.casefold().find(name.casefold()))


def _named_in(name: str, text: str) -> bool:
    if not name.isascii():
        return len(name) > 1 and name in text
    case = 0 if len(name) <= 3 else re.IGNORECASE
    return re.search(rf"(?<![A-Za-z]){re.escape(name)}(?![A-Za-z])", text, case) is not None


def _unknown_city(name: str, day: str = "today") -> ValueError:
    every_name = [n for city in CITIES for n in _names(city)]
    by_key = {_key(n): n for n in reversed(every_name)}
    close = difflib.get_close_matches(_key(name), list(by_key), n=3, cutoff=0.6)
    # A city named among other words ("the weather in Tokyo") is the one meant; a form naming
    # some other city would be copied, and answer for the wrong place.
    guesses = list(dict.fromkeys([*_cities_inside(name), *(by_key[k] for k in close)]))[:3]
    if not guesses:
        # No city of the table meant: no form and no list of others, which is copied. Told
        # "The form that works: get_weather(city='Paris', ...)" of 呼和浩特, Qwen2.5-0.5B asked
        # for Paris and gave Paris' weather as Hohhot's.
        return ValueError(
            # No figure in it either: a model that hands the error back as its answer would
            # state it, and be flagged for a figure from nowhere.
            f"unknown city {name!r}: it is not in the built-in table of sample data, so its "
            "weather is not available here. Say so in the answer; another city's weather is no "
            "answer for it."
        )
    # The guesses are the only cities named: a list of samples would be copied as well.
    message = f"unknown city {name!r}. Use a city from the built-in table, in Chinese or English."
    message += " Did you mean " + " or ".join(repr(g) for g in guesses) + "?"
    # The city alone, as the table spells it: the form names one city.
    message += f" The form that works: get_weather(city={guesses[0]!r}, day={day!r})."
    return ValueError(message)


@tool(cacheable=True, permission="read")
def get_weather(city: str, day: Literal["today", "tomorrow"] = "today") -> dict[str, Any]:
    """Get the weather (天气) for a city: condition and temperature, today or tomorrow.

    Also high/low, humidity and wind. Covers about 50 major cities in China and the world
    (sample data, offline). Returns JSON with city, condition, temp_c (now), high_c and low_c
    (the day's high and low, °C), humidity and wind.

    Args:
        city: City name in Chinese or English, e.g. 北京, 上海, Tokyo or New York.
        day: Which day: "today" (今天) or "tomorrow" (明天).
    """
    # No form and no sample city in these errors: a small model copies either whole, and
    # answered for a day or a city nobody asked about (Paris' weather as Hohhot's, seen).
    if day not in ("today", "tomorrow"):
        raise ValueError(
            f"day must be 'today' or 'tomorrow', not {day!r}: the sample data has no other day. "
            "For any other day, say in the answer that its weather is not available here."
        )
    if not city.strip():
        raise ValueError(
            f"city is empty ({city!r}). Give the name of the city the question asks about, in "
            "Chinese or English, as it is written there; the built-in table holds about 50 "
            "major cities."
        )
    found = _find_city(city)
    if found is None:
        raise _unknown_city(city, day)
    return _report(found, day)
