"""Holidays and calendar lore: Easter, Chinese New Year, zodiac signs, nth weekdays, month grids."""

from __future__ import annotations

import calendar
from datetime import date, timedelta
from typing import Any, Literal

from toolcall_cli import tool

# Spring Festival (春节, first day of the lunar year) in the Gregorian calendar.
_SPRING_FESTIVAL: dict[int, tuple[int, int]] = {
    2000: (2, 5), 2001: (1, 24), 2002: (2, 12), 2003: (2, 1), 2004: (1, 22), 2005: (2, 9),
    2006: (1, 29), 2007: (2, 18), 2008: (2, 7), 2009: (1, 26), 2010: (2, 14), 2011: (2, 3),
    2012: (1, 23), 2013: (2, 10), 2014: (1, 31), 2015: (2, 19), 2016: (2, 8), 2017: (1, 28),
    2018: (2, 16), 2019: (2, 5), 2020: (1, 25), 2021: (2, 12), 2022: (2, 1), 2023: (1, 22),
    2024: (2, 10), 2025: (1, 29), 2026: (2, 17), 2027: (2, 6), 2028: (1, 26), 2029: (2, 13),
    2030: (2, 3),
}  # fmt: skip

_ANIMALS = ("Rat", "Ox", "Tiger", "Rabbit", "Dragon", "Snake", "Horse", "Goat", "Monkey",
            "Rooster", "Dog", "Pig")  # fmt: skip
_ANIMALS_ZH = ("鼠", "牛", "虎", "兔", "龙", "蛇", "马", "羊", "猴", "鸡", "狗", "猪")
_ELEMENTS = ("Wood", "Fire", "Earth", "Metal", "Water")

# (sign, Chinese name, first month, first day): each sign runs until the next one begins.
_SIGNS: tuple[tuple[str, str, int, int], ...] = (
    ("Capricorn", "摩羯座", 1, 1), ("Aquarius", "水瓶座", 1, 20), ("Pisces", "双鱼座", 2, 19),
    ("Aries", "白羊座", 3, 21), ("Taurus", "金牛座", 4, 20), ("Gemini", "双子座", 5, 21),
    ("Cancer", "巨蟹座", 6, 21), ("Leo", "狮子座", 7, 23), ("Virgo", "处女座", 8, 23),
    ("Libra", "天秤座", 9, 23), ("Scorpio", "天蝎座", 10, 23), ("Sagittarius", "射手座", 11, 22),
    ("Capricorn", "摩羯座", 12, 22),
)  # fmt: skip

_WEEKDAY_NUMBERS = {
    name: i
    for i, name in enumerate(
        ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
    )
}


def _nth_weekday(year: int, month: int, weekday: int, n: int) -> date:
    """The n-th given weekday of a month; n = -1 is the last one."""
    if n > 0:
        first = date(year, month, 1)
        found = first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))
        if found.month != month:
            raise ValueError(f"there is no occurrence number {n} of that weekday in the month")
        return found
    last = date(year, month, calendar.monthrange(year, month)[1])
    return last - timedelta(days=(last.weekday() - weekday) % 7)


def _easter(year: int) -> date:
    # The anonymous Gregorian algorithm (Meeus/Jones/Butcher).
    a, b, c = year % 19, year // 100, year % 100
    d, e = b // 4, b % 4
    f = (b + 8) // 25
    g = (b - f + 1) // 3
    h = (19 * a + b - d - g + 15) % 30
    i, k = c // 4, c % 4
    l = (32 + 2 * e + 2 * i - h - k) % 7  # noqa: E741 - the algorithm's own letter
    m = (a + 11 * h + 22 * l) // 451
    month = (h + l - 7 * m + 114) // 31
    day = (h + l - 7 * m + 114) % 31 + 1
    return date(year, month, day)


@tool(permission="read")
def easter_date(year: int) -> dict[str, Any]:
    """Date of Western (Gregorian) Easter Sunday in a year, with Good Friday and Easter Monday.
    Use it for 'when is Easter this year'. It does not give Orthodox Easter.
    中文：复活节日期、耶稣受难日、复活节是哪天。

    Args:
        year: The year, 1583 or later.
    """
    if year < 1583:
        raise ValueError("the Gregorian computation starts in 1583")
    sunday = _easter(year)
    return {
        "easter_sunday": sunday.isoformat(),
        "good_friday": (sunday - timedelta(days=2)).isoformat(),
        "easter_monday": (sunday + timedelta(days=1)).isoformat(),
    }


@tool(permission="read")
def chinese_new_year_date(year: int) -> dict[str, Any]:
    """Gregorian date of Chinese New Year, the Spring Festival (first day of the lunar year), for
    2000 to 2030, with the zodiac animal. Use it for 'when is Chinese New Year'. For someone's
    zodiac sign use chinese_zodiac_animal.
    中文：春节日期、农历新年、过年是哪天、大年初一。

    Args:
        year: The Gregorian year, 2000-2030.
    """
    if year not in _SPRING_FESTIVAL:
        raise ValueError("the table covers 2000 to 2030")
    month, day = _SPRING_FESTIVAL[year]
    found = date(year, month, day)
    animal = (year - 2020) % 12
    return {
        "date": found.isoformat(),
        "weekday": found.strftime("%A"),
        "zodiac": _ANIMALS[animal],
        "zodiac_zh": _ANIMALS_ZH[animal],
    }


@tool(permission="read")
def chinese_zodiac_animal(birth_date: str) -> dict[str, Any]:
    """Chinese zodiac animal and element of a birth date, counted from the lunar new year. Use it
    for 'what is my Chinese zodiac sign' or 'what animal year was I born in'. For Western star
    signs use star_sign; for 甲辰-style year names use sexagenary_year.
    中文：生肖、属相、属什么、十二生肖。

    Args:
        birth_date: The date of birth, YYYY-MM-DD (years 2000-2031 use the exact new-year date;
            others assume the year starts on 4 February).
    """
    born = date.fromisoformat(birth_date)
    month, day = _SPRING_FESTIVAL.get(born.year, (2, 4))
    year = born.year if born >= date(born.year, month, day) else born.year - 1
    animal = (year - 2020) % 12
    element = _ELEMENTS[((year - 4) % 10) // 2]
    return {
        "lunar_year": year,
        "animal": _ANIMALS[animal],
        "animal_zh": _ANIMALS_ZH[animal],
        "element": element,
    }


@tool(permission="read")
def star_sign(birth_date: str) -> dict[str, Any]:
    """Western astrological star sign (zodiac sign) for a birthday. Use it for 'what is my star
    sign' or horoscope sign questions. For the Chinese zodiac use chinese_zodiac_animal.
    中文：星座、星座查询、什么星座、十二星座。

    Args:
        birth_date: The birthday, YYYY-MM-DD or MM-DD.
    """
    parts = birth_date.strip().split("-")
    month, day = int(parts[-2]), int(parts[-1])
    sign = [s for s in _SIGNS if (s[2], s[3]) <= (month, day)][-1]
    return {"sign": sign[0], "sign_zh": sign[1]}


@tool(permission="read")
def nth_weekday_of_month(year: int, month: int, weekday: str, occurrence: int) -> dict[str, Any]:
    """The date of the nth (or last) given weekday of a month, e.g. the 4th Thursday of November
    or the last Monday of May. Use it for floating holidays, meetups and 'first Monday of the
    month'.
    中文：某月第几个星期几、第几个周一、最后一个周五。

    Args:
        year: The year.
        month: The month, 1-12.
        weekday: The weekday name in English, e.g. Thursday.
        occurrence: 1-5 for first to fifth, or -1 for the last one.
    """
    number = _WEEKDAY_NUMBERS.get(weekday.strip().lower())
    if number is None:
        raise ValueError(f"unknown weekday {weekday!r}")
    return {"date": _nth_weekday(year, month, number, occurrence).isoformat()}


@tool(permission="read")
def us_federal_holidays(year: int) -> dict[str, Any]:
    """The eleven US federal holidays of a year with their observed dates (Thanksgiving,
    Independence Day, Memorial Day...). Use it for US public holidays and day-off questions. For
    England and Wales use uk_bank_holidays.
    中文：美国法定节假日、美国假期、感恩节、独立日。

    Args:
        year: The year.
    """

    def observed(day: date) -> date:
        if day.weekday() == 5:
            return day - timedelta(days=1)
        if day.weekday() == 6:
            return day + timedelta(days=1)
        return day

    holidays = {
        "New Year's Day": observed(date(year, 1, 1)),
        "Martin Luther King Jr. Day": _nth_weekday(year, 1, 0, 3),
        "Washington's Birthday": _nth_weekday(year, 2, 0, 3),
        "Memorial Day": _nth_weekday(year, 5, 0, -1),
        "Juneteenth": observed(date(year, 6, 19)),
        "Independence Day": observed(date(year, 7, 4)),
        "Labor Day": _nth_weekday(year, 9, 0, 1),
        "Columbus Day": _nth_weekday(year, 10, 0, 2),
        "Veterans Day": observed(date(year, 11, 11)),
        "Thanksgiving Day": _nth_weekday(year, 11, 3, 4),
        "Christmas Day": observed(date(year, 12, 25)),
    }
    return {"holidays": {name: day.isoformat() for name, day in holidays.items()}}


@tool(permission="read")
def uk_bank_holidays(year: int) -> dict[str, Any]:
    """Bank holidays in England and Wales for a year, by the standing rules with substitute days.
    Use it for UK public holidays and days off. For US holidays use us_federal_holidays.
    中文：英国银行假日、英国公共假期、英国节假日。

    Args:
        year: The year.
    """
    easter = _easter(year)
    new_year = date(year, 1, 1)
    while new_year.weekday() >= 5:
        new_year += timedelta(days=1)
    christmas, boxing = date(year, 12, 25), date(year, 12, 26)
    if christmas.weekday() == 5:
        christmas, boxing = christmas + timedelta(days=2), boxing + timedelta(days=2)
    elif christmas.weekday() == 6:
        christmas, boxing = christmas + timedelta(days=2), boxing
    elif boxing.weekday() == 5:
        boxing += timedelta(days=2)
    holidays = {
        "New Year's Day": new_year,
        "Good Friday": easter - timedelta(days=2),
        "Easter Monday": easter + timedelta(days=1),
        "Early May bank holiday": _nth_weekday(year, 5, 0, 1),
        "Spring bank holiday": _nth_weekday(year, 5, 0, -1),
        "Summer bank holiday": _nth_weekday(year, 8, 0, -1),
        "Christmas Day": christmas,
        "Boxing Day": boxing,
    }
    return {"holidays": {name: day.isoformat() for name, day in holidays.items()}}


@tool(permission="read")
def month_calendar(
    year: int, month: int, first_weekday: Literal["monday", "sunday"] = "monday"
) -> dict[str, Any]:
    """A printable text calendar grid for one month, with weeks starting on Monday or Sunday. Use
    it to show or print a month's calendar.
    中文：月历、日历、打印日历、某月日历。

    Args:
        year: The year.
        month: The month, 1-12.
        first_weekday: Whether weeks start on monday or sunday.
    """
    grid = calendar.TextCalendar(0 if first_weekday == "monday" else 6).formatmonth(year, month)
    return {"calendar": grid, "days_in_month": calendar.monthrange(year, month)[1]}


@tool(permission="read")
def days_until_birthday(birthday: str, today: str) -> dict[str, Any]:
    """How many days until the next birthday, and the age that will be reached. Use it for
    birthday countdowns. For exact age today use age_on_date.
    中文：生日倒计时、离生日还有几天、下次生日。

    Args:
        birthday: The date of birth, YYYY-MM-DD.
        today: Today's date, YYYY-MM-DD.
    """
    born, now = date.fromisoformat(birthday), date.fromisoformat(today)

    def on(year: int) -> date:
        # 29 February birthdays are kept on 28 February in common years.
        day = born.day if calendar.isleap(year) or (born.month, born.day) != (2, 29) else 28
        return date(year, born.month, day)

    upcoming = on(now.year) if on(now.year) >= now else on(now.year + 1)
    return {
        "days": (upcoming - now).days,
        "next_birthday": upcoming.isoformat(),
        "turning": upcoming.year - born.year,
    }


@tool(permission="read")
def week_dates(iso_year: int, week: int) -> dict[str, Any]:
    """The Monday-to-Sunday dates of an ISO week number, e.g. week 10 of 2025. Use it for 'which
    dates are in week 10'. For the week number of a date use iso_week_number.
    中文：某周日期、第几周是哪几天、周一到周日。

    Args:
        iso_year: The ISO week-numbering year.
        week: The week number, 1-53.
    """
    monday = date.fromisocalendar(iso_year, week, 1)
    return {"days": [(monday + timedelta(days=i)).isoformat() for i in range(7)]}


@tool(permission="read")
def mothers_and_fathers_day(year: int, country: Literal["US", "UK"] = "US") -> dict[str, Any]:
    """Dates of Mother's Day and Father's Day in a year, by US rules (also used in China) or UK
    rules (Mothering Sunday). Use it for 'when is Mother's Day this year'.
    中文：母亲节、父亲节、母亲节是几号、父亲节日期。

    Args:
        year: The year.
        country: US (second Sunday of May) or UK (Mothering Sunday, three weeks before Easter).
    """
    mothers = _nth_weekday(year, 5, 6, 2) if country == "US" else _easter(year) - timedelta(days=21)
    return {
        "mothers_day": mothers.isoformat(),
        "fathers_day": _nth_weekday(year, 6, 6, 3).isoformat(),
    }
