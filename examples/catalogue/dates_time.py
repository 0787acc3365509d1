"""Date arithmetic, durations, timestamps and converting a given time between time zones."""

from __future__ import annotations

import calendar
import re
from datetime import date, datetime, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from toolcall_cli import tool

_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_WEEKDAYS_ZH = ("星期一", "星期二", "星期三", "星期四", "星期五", "星期六", "星期日")
_DURATION_PART = re.compile(
    r"(\d+(?:\.\d+)?)\s*(weeks?|w|days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s"
    r"|周|天|小时|分钟|分|秒)",
    re.IGNORECASE,
)
_SECONDS_PER: dict[str, int] = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1}
_ZH_UNITS = {"周": "w", "天": "d", "小时": "h", "分钟": "m", "分": "m", "秒": "s"}


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"{text!r} is not a date; write YYYY-MM-DD") from None


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown IANA time zone {name!r}, e.g. Europe/Paris") from None


@tool(permission="read")
def days_between_dates(start: str, end: str) -> dict[str, Any]:
    """Number of days (and weeks) between two calendar dates. Use it for 'how many days until',
    'how long ago' or a countdown between two dates. For working days only use
    business_days_between; for age use age_on_date.
    中文：相差几天、日期间隔、倒计时、还有多少天。

    Args:
        start: The first date, YYYY-MM-DD.
        end: The second date, YYYY-MM-DD.
    """
    days = (_day(end) - _day(start)).days
    return {"days": days, "weeks": round(days / 7, 2)}


@tool(permission="read")
def add_to_date(
    start: str, days: int = 0, weeks: int = 0, months: int = 0, years: int = 0
) -> dict[str, Any]:
    """Add or subtract days, weeks, months or years to a date to find the resulting date (month
    ends are clamped). Use it for deadlines, expiry dates and 'what date is 90 days after'. For
    the gap between two dates use days_between_dates.
    中文：日期推算、几天后是几号、日期加减、到期日。

    Args:
        start: The date to start from, YYYY-MM-DD.
        days: Days to add (negative to go back).
        weeks: Weeks to add.
        months: Calendar months to add; 31 Jan + 1 month gives the last day of February.
        years: Years to add.
    """
    base = _day(start)
    total_months = base.month - 1 + months + 12 * years
    year, month = base.year + total_months // 12, total_months % 12 + 1
    day = min(base.day, calendar.monthrange(year, month)[1])
    result = date(year, month, day) + timedelta(days=days, weeks=weeks)
    return {"date": result.isoformat(), "weekday": _WEEKDAYS[result.weekday()]}


@tool(permission="read")
def day_of_week(day: str) -> dict[str, Any]:
    """Which day of the week a date falls on, in English and Chinese. Use it for 'what day was 1
    January 2000' or 'is that date a weekend'.
    中文：星期几、周几、哪天是礼拜几。

    Args:
        day: The date, YYYY-MM-DD.
    """
    found = _day(day)
    return {"weekday": _WEEKDAYS[found.weekday()], "weekday_zh": _WEEKDAYS_ZH[found.weekday()]}


@tool(permission="read")
def convert_time_between_zones(local_time: str, from_zone: str, to_zone: str) -> dict[str, Any]:
    """Convert a given date and clock time from one time zone to another by IANA zone names,
    daylight saving aware. Use it for meeting times across countries and 'when it is 9am in
    London, what time is it in Beijing'. For the current time use get_time; for a zone's offset
    use utc_offset_on_date.
    中文：时区换算、时差、北京时间、当地时间、会议时间。

    Args:
        local_time: The time to convert, YYYY-MM-DDTHH:MM or YYYY-MM-DD HH:MM.
        from_zone: The zone the time is in, e.g. America/New_York.
        to_zone: The zone to express it in, e.g. Asia/Shanghai.
    """
    try:
        naive = datetime.fromisoformat(local_time.strip())
    except ValueError:
        raise ValueError(f"{local_time!r} is not a date-time; write YYYY-MM-DD HH:MM") from None
    source = naive.replace(tzinfo=_zone(from_zone))
    target = source.astimezone(_zone(to_zone))
    return {
        "converted": target.strftime("%Y-%m-%d %H:%M"),
        "utc_offset": target.strftime("%z"),
        "day_changed": target.date() != source.date(),
    }


@tool(permission="read")
def age_on_date(birth_date: str, on_date: str) -> dict[str, Any]:
    """Exact age in years, months and days from a date of birth on a given date. Use it for 'how
    old am I', full-year age (周岁) and age requirements. For the next birthday use
    days_until_birthday.
    中文：年龄计算、周岁、几岁、出生日期算年龄。

    Args:
        birth_date: The date of birth, YYYY-MM-DD.
        on_date: The date to measure the age at, YYYY-MM-DD.
    """
    born, then = _day(birth_date), _day(on_date)
    if then < born:
        raise ValueError("on_date is before the birth date")
    months = (then.year - born.year) * 12 + then.month - born.month
    if then.day < born.day:
        months -= 1
    anchor = add_to_date(birth_date, months=months)["date"]
    days = (then - _day(anchor)).days
    return {
        "years": months // 12,
        "months": months % 12,
        "days": days,
        "total_days": (then - born).days,
    }


@tool(permission="read")
def iso_week_number(day: str) -> dict[str, Any]:
    """ISO 8601 week number and week-year of a date, e.g. 2025-W01. Use it for 'which week of the
    year is this date'. For the dates in a given week use week_dates.
    中文：第几周、周数、ISO周、一年中的第几周。

    Args:
        day: The date, YYYY-MM-DD.
    """
    year, week, weekday = _day(day).isocalendar()
    return {"iso_year": year, "week": week, "weekday": weekday, "label": f"{year}-W{week:02d}"}


@tool(permission="read")
def business_days_between(
    start: str, end: str, holidays: list[str] | None = None
) -> dict[str, Any]:
    """Working days (Monday to Friday) between two dates inclusive, minus listed holidays. Use it
    for delivery times, notice periods and 'how many workdays until'. For calendar days use
    days_between_dates.
    中文：工作日天数、工作日计算、除去周末、上班天数。

    Args:
        start: The first date, YYYY-MM-DD.
        end: The last date, YYYY-MM-DD.
        holidays: Dates to skip as well, each YYYY-MM-DD.
    """
    first, last = _day(start), _day(end)
    if last < first:
        first, last = last, first
    skipped = {_day(h) for h in holidays or []}
    days = 0
    current = first
    while current <= last:
        if current.weekday() < 5 and current not in skipped:
            days += 1
        current += timedelta(days=1)
    return {"business_days": days, "calendar_days": (last - first).days + 1}


@tool(permission="read")
def unix_timestamp_to_datetime(timestamp: float, zone: str = "UTC") -> dict[str, Any]:
    """Convert a Unix epoch timestamp (seconds or milliseconds) to a readable date and time in a
    time zone. Use it for timestamps in logs, databases and APIs. For the reverse use
    datetime_to_unix_timestamp.
    中文：时间戳转日期、Unix时间戳、毫秒时间戳、时间戳转换。

    Args:
        timestamp: Seconds since 1970-01-01 UTC; values above 1e11 are read as milliseconds.
        zone: An IANA time zone for the result.
    """
    seconds = timestamp / 1000 if abs(timestamp) > 1e11 else timestamp
    moment = datetime.fromtimestamp(seconds, tz=timezone.utc).astimezone(_zone(zone))
    return {"datetime": moment.isoformat(), "seconds": seconds}


@tool(permission="read")
def datetime_to_unix_timestamp(moment: str, zone: str = "UTC") -> dict[str, Any]:
    """Convert a date and time in a time zone to Unix epoch seconds and milliseconds. Use it when
    a program or API needs a timestamp. For the reverse use unix_timestamp_to_datetime.
    中文：日期转时间戳、Unix时间戳、时间转换。

    Args:
        moment: YYYY-MM-DD HH:MM[:SS] (or just YYYY-MM-DD for midnight).
        zone: The IANA time zone the moment is in.
    """
    naive = datetime.fromisoformat(moment.strip())
    stamp = naive.replace(tzinfo=_zone(zone)).timestamp()
    return {"seconds": int(stamp), "milliseconds": int(stamp * 1000)}


@tool(permission="read")
def parse_duration(text: str) -> dict[str, Any]:
    """Turn a duration written in words or units, like '1h 30m', '2 days 4 hours' or
    '3小时20分钟', into seconds (and minutes, hours). Use it to total or convert a written time
    span. For seconds into days and hours use format_duration.
    中文：时长换算、几小时几分钟等于多少秒、时间长度。

    Args:
        text: The duration in words or short units.
    """
    total = 0.0
    found = False
    for amount, unit in _DURATION_PART.findall(text):
        key = _ZH_UNITS.get(unit, unit.lower()[0])
        total += float(amount) * _SECONDS_PER[key]
        found = True
    if not found:
        raise ValueError(f"no duration found in {text!r}; write e.g. 1h 30m")
    return {"seconds": total, "minutes": round(total / 60, 2), "hours": round(total / 3600, 4)}


@tool(permission="read")
def format_duration(seconds: float) -> dict[str, Any]:
    """Write a number of seconds as days, hours, minutes and seconds (e.g. 93784 -> 1d 2h 3m 4s).
    Use it for 'how many hours is 10000 seconds' or to make an uptime readable. For text into
    seconds use parse_duration.
    中文：秒数转换、多少秒是几小时、时长格式化。

    Args:
        seconds: The length of time in seconds.
    """
    rest = round(abs(seconds))
    days, rest = divmod(rest, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{v}{u}" for v, u in ((days, "d"), (hours, "h"), (minutes, "m"), (secs, "s")) if v]
    return {
        "text": " ".join(parts) or "0s",
        "clock": f"{days * 24 + hours:02d}:{minutes:02d}:{secs:02d}",
    }


@tool(permission="read")
def leap_year_check(year: int) -> dict[str, Any]:
    """Whether a year is a leap year in the Gregorian calendar, its number of days and whether
    February has 29 days. Use it for leap-year and 'does this year have Feb 29' questions.
    中文：闰年判断、闰年、二月有几天、平年。

    Args:
        year: The year, e.g. 2024.
    """
    leap = calendar.isleap(year)
    return {"leap": leap, "days": 366 if leap else 365}


@tool(permission="read")
def fiscal_quarter(day: str, fiscal_year_start_month: int = 1) -> dict[str, Any]:
    """Which quarter (Q1-Q4) and fiscal year a date is in, for a fiscal year starting in any
    month. Use it for reporting periods and financial-year questions. For the ISO week use
    iso_week_number.
    中文：季度、财年、会计年度、第几季度。

    Args:
        day: The date, YYYY-MM-DD.
        fiscal_year_start_month: The month the fiscal year starts (1 = January, 4 = April).
    """
    found = _day(day)
    if not 1 <= fiscal_year_start_month <= 12:
        raise ValueError("fiscal_year_start_month must be 1-12")
    shifted = (found.month - fiscal_year_start_month) % 12
    fiscal_year = (
        found.year
        if found.month < fiscal_year_start_month or fiscal_year_start_month == 1
        else found.year + 1
    )
    return {"quarter": f"Q{shifted // 3 + 1}", "fiscal_year": fiscal_year}


@tool(permission="read")
def utc_offset_on_date(zone: str, day: str) -> dict[str, Any]:
    """A time zone's UTC offset and abbreviation on a date, and whether daylight saving (summer
    time) is in effect. Use it for 'is New York on DST in March' or 'what is GMT+ for Sydney'.
    To convert a clock time use convert_time_between_zones.
    中文：时区偏移、夏令时、UTC时差、冬令时。

    Args:
        zone: An IANA time zone, e.g. Europe/London.
        day: The date, YYYY-MM-DD (noon that day is used).
    """
    moment = datetime.combine(_day(day), datetime.min.time()).replace(hour=12, tzinfo=_zone(zone))
    dst = moment.dst()
    return {
        "utc_offset": moment.strftime("%z"),
        "abbreviation": moment.tzname(),
        "daylight_saving": bool(dst),
    }
