"""The current date and time in a time zone: IANA name, UTC offset or city (Chinese or English)."""

from __future__ import annotations

import difflib
import functools
import os
import re
from datetime import datetime, timedelta, tzinfo
from datetime import timezone as FixedOffset
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from toolcall_cli import tool

NOW_VARIABLE = "TOOLCALL_NOW"

# Cities, countries and abbreviations people (and models) write instead of an IANA name.
_ALIASES: dict[str, str] = {
    **dict.fromkeys(["北京", "beijing", "上海", "shanghai", "中国", "china", "北京时间"],
                    "Asia/Shanghai"),
    **dict.fromkeys(["广州", "guangzhou", "深圳", "shenzhen", "成都", "chengdu"], "Asia/Shanghai"),
    **dict.fromkeys(["香港", "hong kong", "hk"], "Asia/Hong_Kong"),
    **dict.fromkeys(["台北", "taipei"], "Asia/Taipei"),
    **dict.fromkeys(["东京", "東京", "tokyo", "日本", "japan", "jst"], "Asia/Tokyo"),
    **dict.fromkeys(["首尔", "seoul", "韩国", "korea", "kst"], "Asia/Seoul"),
    **dict.fromkeys(["新加坡", "singapore"], "Asia/Singapore"),
    **dict.fromkeys(["曼谷", "bangkok"], "Asia/Bangkok"),
    **dict.fromkeys(["新德里", "new delhi", "delhi", "mumbai", "孟买", "印度", "india", "ist"],
                    "Asia/Kolkata"),
    **dict.fromkeys(["迪拜", "dubai"], "Asia/Dubai"),
    **dict.fromkeys(["莫斯科", "moscow"], "Europe/Moscow"),
    **dict.fromkeys(["伦敦", "london", "英国", "uk", "bst"], "Europe/London"),
    **dict.fromkeys(["巴黎", "paris", "法国", "france"], "Europe/Paris"),
    **dict.fromkeys(["柏林", "berlin", "德国", "germany"], "Europe/Berlin"),
    **dict.fromkeys(["罗马", "rome"], "Europe/Rome"),
    **dict.fromkeys(["马德里", "madrid"], "Europe/Madrid"),
    **dict.fromkeys(["纽约", "new york", "nyc", "est", "edt", "美东"], "America/New_York"),
    **dict.fromkeys(["芝加哥", "chicago"], "America/Chicago"),
    **dict.fromkeys(["洛杉矶", "los angeles", "la", "旧金山", "san francisco", "sf", "pst", "pdt",
                     "美西"], "America/Los_Angeles"),
    **dict.fromkeys(["多伦多", "toronto"], "America/Toronto"),
    **dict.fromkeys(["温哥华", "vancouver"], "America/Vancouver"),
    **dict.fromkeys(["墨西哥城", "mexico city"], "America/Mexico_City"),
    **dict.fromkeys(["圣保罗", "sao paulo", "são paulo", "巴西", "brazil"], "America/Sao_Paulo"),
    **dict.fromkeys(["悉尼", "sydney"], "Australia/Sydney"),
    **dict.fromkeys(["墨尔本", "melbourne"], "Australia/Melbourne"),
    **dict.fromkeys(["开罗", "cairo", "埃及", "egypt"], "Africa/Cairo"),
    **dict.fromkeys(["utc", "gmt", "z", "zulu", "协调世界时", "格林尼治"], "UTC"),
}  # fmt: skip

_OFFSET = re.compile(r"^(?:utc|gmt)?\s*([+-])\s*(\d{1,2})(?::?(\d{2}))?$")

_WEEKDAYS_ZH = ("星期一", "星期二", "星期三", "星期四", "星期五", "星期六", "星期日")


def _key(name: str) -> str:
    return " ".join(name.replace("_", " ").casefold().split())


@functools.lru_cache(maxsize=1)
def _iana_by_key() -> dict[str, str]:
    """Every IANA zone by its lower-case name and by its city part ("new york", "kolkata")."""
    zones = sorted(available_timezones())
    index = {_key(zone.rsplit("/", 1)[-1]): zone for zone in zones if "/" in zone}
    index.update({_key(zone): zone for zone in zones})
    return index


def _offset_zone(text: str) -> tzinfo | None:
    match = _OFFSET.match(text)
    if match is None:
        return None
    sign, hours, minutes = match.group(1), int(match.group(2)), int(match.group(3) or 0)
    if hours > 14 or minutes >= 60:
        raise ValueError(f"UTC offset {text!r} is out of range; offsets go from -12:00 to +14:00.")
    delta = timedelta(hours=hours, minutes=minutes)
    return FixedOffset(-delta if sign == "-" else delta)


def _zone(name: str) -> tzinfo:
    key = _key(name)
    fixed = _offset_zone(key.replace(" ", ""))
    if fixed is not None:
        return fixed
    iana = _ALIASES.get(key) or _iana_by_key().get(key)
    if iana is None:
        raise _unknown_zone(name)
    try:
        return ZoneInfo(iana)
    except (ZoneInfoNotFoundError, ValueError):
        raise _unknown_zone(name) from None


def _unknown_zone(name: str) -> ValueError:
    # The forms in words and placeholders, no zone, offset or city of samples: a small model
    # copies a sample whole, and would tell that zone's time as the one asked about.
    message = (
        f"unknown timezone {name!r}. Give the zone of the place the question asks about: an "
        "IANA name written Area/City, a UTC offset written +HH:MM or UTC-H, or a major city or "
        "country in Chinese or English."
    )
    candidates = list(_ALIASES) + list(_iana_by_key())
    close = difflib.get_close_matches(_key(name), candidates, n=1, cutoff=0.75)
    if not close:
        # No form naming a zone nobody meant: a small model copies a form whole, and would
        # tell Asia/Shanghai's time (get_weather's Paris for 呼和浩特, seen).
        return ValueError(message)
    suggestion = _ALIASES.get(close[0]) or _iana_by_key()[close[0]]
    message += f" Did you mean {suggestion!r}?"
    message += f" The form that works: get_time(timezone={suggestion!r}) (one argument)."
    return ValueError(message)


def _now() -> datetime:
    """The current instant, or TOOLCALL_NOW when set (naive values are read as UTC)."""
    fixed = os.environ.get(NOW_VARIABLE, "").strip()
    if not fixed:
        return datetime.now(FixedOffset.utc)
    try:
        # Python 3.10's fromisoformat does not accept a trailing "Z".
        moment = datetime.fromisoformat(re.sub(r"[Zz]$", "+00:00", fixed))
    except ValueError:
        raise ValueError(f"{NOW_VARIABLE}={fixed!r} is not an ISO 8601 date-time") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=FixedOffset.utc)


def _format_offset(moment: datetime) -> str:
    offset = moment.utcoffset() or timedelta(0)
    sign = "-" if offset < timedelta(0) else "+"
    minutes = abs(int(offset.total_seconds())) // 60
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def _zone_name(zone: tzinfo, moment: datetime) -> str:
    if isinstance(zone, ZoneInfo):
        return zone.key
    return f"UTC{_format_offset(moment)}"


# The time moves on: a repeated call must run again.
@tool(timeout=5, cacheable=False, permission="read")
def get_time(timezone: str = "UTC") -> dict[str, Any]:
    """Get the current date and time (时间, 日期, 现在几点) in a time zone, with the weekday.

    If the environment variable TOOLCALL_NOW is set (ISO 8601, e.g. 2025-01-02T03:04:05Z), it is
    used as the current instant, for reproducible demos and tests.

    Args:
        timezone: An IANA time zone (Asia/Shanghai), a UTC offset (+08:00, UTC-5) or a city or
            country in Chinese or English (北京, Tokyo, New York). Defaults to UTC.
    """
    if not timezone.strip():
        # Left out, it is UTC; sent empty, it is a place the caller could not name: UTC's time
        # would be taken for that place's.
        raise ValueError(
            f"timezone is empty ({timezone!r}). Give the zone of the place the question asks "
            "about (an IANA name written Area/City, a UTC offset written +HH:MM, or a major "
            "city or country), or leave timezone out for UTC."
        )
    zone = _zone(timezone)
    local = _now().astimezone(zone)
    return {
        "timezone": _zone_name(zone, local),
        "iso": local.isoformat(timespec="seconds"),
        "local_time": local.strftime("%Y-%m-%d %H:%M:%S"),
        "date": local.strftime("%Y-%m-%d"),
        "time": local.strftime("%H:%M"),
        "weekday": local.strftime("%A"),
        "weekday_zh": _WEEKDAYS_ZH[local.weekday()],
        "utc_offset": _format_offset(local),
    }
