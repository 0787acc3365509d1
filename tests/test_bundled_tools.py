"""The bundled weather, clock and units tools: real answers; errors that say how to fix the call."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from zoneinfo import available_timezones

import pytest
from rich.console import Console

from toolcall_cli.cli._tables import print_tool_table
from toolcall_cli.tools.loader import bundled_tools_dir, load_tools, tool_dirs

_REGISTRY = load_tools([bundled_tools_dir()]).registry


def bundled(name: str) -> Callable[..., Any]:
    found = _REGISTRY.get(name)
    assert found is not None, f"bundled tool {name} did not load"
    return found.func


get_weather = bundled("get_weather")
get_time = bundled("get_time")
convert_units = bundled("convert_units")


# --- where they come from ------------------------------------------------------------------

REPO = Path(__file__).resolve().parent.parent
FILES = {
    "get_weather": "weather.py",
    "calculate": "calculator.py",
    "get_time": "clock.py",
    "convert_units": "units.py",
}


def listed(*flags: str, cwd: Path) -> list[tuple[str, str]]:
    """`toolcall tools` of the dev install (the test venv's console script), piped: one
    (name, source file) per listed tool."""
    script = Path(sys.executable).parent / "toolcall"
    assert script.is_file(), f"no console script at {script}: run pip install -e '.[test]'"
    done = subprocess.run(
        [str(script), "tools", *flags], cwd=cwd, capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stderr) == (0, "")
    rows = [line for line in done.stdout.splitlines() if line != "No tools are loaded."]
    return [(row.split("(", 1)[0], row.rsplit("  ", 1)[1]) for row in rows]


@pytest.mark.parametrize("where", ["elsewhere", "repo root"])
def test_the_dev_install_lists_each_bundled_tool_once_from_the_repos_tools_d(
    where: str, tmp_path: Path
) -> None:
    cwd = REPO if where == "repo root" else tmp_path
    expected = sorted((name, str(REPO / "tools.d" / file)) for name, file in FILES.items())
    assert sorted(listed(cwd=cwd)) == expected
    # From the repo root ./tools.d is the bundled dir itself, so the flag leaves it out there too.
    assert listed("--no-default-tools", cwd=cwd) == []


def test_the_tools_table_names_bundled_files_briefly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    loaded = load_tools(tool_dirs([], include_bundled=True, cwd=tmp_path))
    screen = io.StringIO()
    print_tool_table(list(loaded.registry), Console(file=screen, force_terminal=True, width=200))
    for file in FILES.values():
        assert f"bundled: {file}" in screen.getvalue()
    assert str(bundled_tools_dir()) not in screen.getvalue()


# --- descriptions: models pick tools by these ------------------------------------------------


@pytest.mark.parametrize(
    ("name", "keyword"),
    [
        ("get_weather", "天气"),
        ("calculate", "计算"),
        ("get_time", "时间"),
        ("convert_units", "单位"),
    ],
)
def test_descriptions_mention_english_and_chinese_keywords(name: str, keyword: str) -> None:
    found = _REGISTRY.get(name)
    assert found is not None
    # The first line is what tables and pickers show, so the keyword must be there.
    assert keyword in found.spec.description.splitlines()[0]
    for schema in found.spec.parameters["properties"].values():
        assert schema.get("description")


# --- weather ---------------------------------------------------------------------------------


def test_weather_report_fields() -> None:
    report = get_weather("北京")
    assert report["city"] == "Beijing"
    assert report["city_zh"] == "北京"
    assert report["day"] == "today"
    assert report["low_c"] < report["temp_c"] < report["high_c"]
    assert 0 < report["humidity"] <= 100
    assert report["condition"] and report["condition_zh"] and report["wind"]
    assert "built-in" in report["note"]


@pytest.mark.parametrize(
    "name",
    ["北京", "北京市", "beijing", "  BEIJING ", "Peking", "Beijing, China"],
)
def test_weather_city_aliases_are_case_and_space_insensitive(name: str) -> None:
    assert get_weather(name)["city"] == "Beijing"


@pytest.mark.parametrize("name", ["New York", "new york", "NYC", "纽约", "newyork", "New-York"])
def test_weather_new_york_aliases(name: str) -> None:
    assert get_weather(name)["city"] == "New York"


def test_weather_is_deterministic_and_days_differ() -> None:
    assert get_weather("Paris") == get_weather("paris")
    today, tomorrow = get_weather("Paris", "today"), get_weather("Paris", "tomorrow")
    assert tomorrow["day"] == "tomorrow"
    assert today != tomorrow


def test_weather_table_is_big_varied_and_plausible() -> None:
    cities = [
        "北京", "上海", "广州", "深圳", "成都", "哈尔滨", "拉萨", "三亚", "香港", "Tokyo", "Seoul",
        "Singapore", "Bangkok", "Dubai", "Moscow", "London", "Paris", "Berlin", "New York",
        "Los Angeles", "Chicago", "Toronto", "Sydney", "Cairo", "Rio de Janeiro", "Reykjavik",
        "Mexico City", "New Delhi", "Rome", "Madrid",
    ]  # fmt: skip
    reports = [get_weather(city) for city in cities]
    assert len({r["city"] for r in reports}) == len(cities)
    temps = [r["temp_c"] for r in reports]
    assert min(temps) < 0 < 30 < max(temps)
    assert len({r["condition"] for r in reports}) >= 4
    for report in reports:
        assert -40 <= report["low_c"] <= report["high_c"] <= 45
        if report["temp_c"] <= 0:
            assert "rain" not in report["condition"].lower()


def test_weather_unknown_city_says_how_to_fix() -> None:
    with pytest.raises(ValueError) as caught:
        get_weather("Springfeld")
    message = str(caught.value)
    assert message.startswith("unknown city 'Springfeld'. Use a city from the built-in table")
    assert "Did you mean 'Springfield'?" in message
    # The guess is the only city named: no list of samples to copy.
    assert "北京" not in message and "Paris" not in message


@pytest.mark.parametrize("city", ["Atlantis-under-the-sea", "la météo à Lyon"])
def test_weather_unknown_city_without_close_match_has_no_guess(city: str) -> None:
    """Nor a form naming another city, which a small model copies (test_realmodel_replays)."""
    with pytest.raises(ValueError) as caught:
        get_weather(city, "tomorrow")
    assert "Did you mean" not in str(caught.value) and "Paris" not in str(caught.value)


@pytest.mark.parametrize("city", ["", "  "])
def test_weather_empty_city_says_what_is_wanted_and_names_no_city(city: str) -> None:
    """Told "e.g. 北京, Shanghai, Paris. The form that works: get_weather(city='Paris', ...)",
    a small model asks for Paris, whatever the question's city."""
    with pytest.raises(ValueError) as caught:
        get_weather(city)
    message = str(caught.value)
    assert message.startswith(f"city is empty ({city!r}).")
    assert "city the question asks about" in message and "Chinese or English" in message
    assert "form that works" not in message
    table = get_weather.__globals__["CITIES"]  # the plugin's module is loaded, not imported
    assert not [name for sample in table for name in (sample.zh, sample.en) if name in message]


@pytest.mark.parametrize("day", ["yesterday", "后天"])
def test_weather_other_day_names_no_day_it_did_not_mean(day: str) -> None:
    with pytest.raises(ValueError) as caught:
        get_weather("Paris", day)
    message = str(caught.value)
    assert message.startswith(f"day must be 'today' or 'tomorrow', not {day!r}")
    assert "form that works" not in message and "day='tomorrow'" not in message


# --- clock -----------------------------------------------------------------------------------


@pytest.fixture
def fixed_now(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLCALL_NOW", "2025-01-02T03:04:05Z")


@pytest.mark.usefixtures("fixed_now")
@pytest.mark.parametrize(
    ("zone", "name", "iso"),
    [
        ("UTC", "UTC", "2025-01-02T03:04:05+00:00"),
        ("北京", "Asia/Shanghai", "2025-01-02T11:04:05+08:00"),
        ("Beijing", "Asia/Shanghai", "2025-01-02T11:04:05+08:00"),
        ("东京", "Asia/Tokyo", "2025-01-02T12:04:05+09:00"),
        ("New York", "America/New_York", "2025-01-01T22:04:05-05:00"),
        ("纽约", "America/New_York", "2025-01-01T22:04:05-05:00"),
        ("london", "Europe/London", "2025-01-02T03:04:05+00:00"),
        ("Europe/Paris", "Europe/Paris", "2025-01-02T04:04:05+01:00"),
        ("asia/kolkata", "Asia/Kolkata", "2025-01-02T08:34:05+05:30"),
        ("Kolkata", "Asia/Kolkata", "2025-01-02T08:34:05+05:30"),
        ("+08:00", "UTC+08:00", "2025-01-02T11:04:05+08:00"),
        ("UTC+8", "UTC+08:00", "2025-01-02T11:04:05+08:00"),
        ("UTC-5", "UTC-05:00", "2025-01-01T22:04:05-05:00"),
        ("GMT+05:30", "UTC+05:30", "2025-01-02T08:34:05+05:30"),
    ],
)
def test_time_in_zones(zone: str, name: str, iso: str) -> None:
    now = get_time(zone)
    assert now["timezone"] == name
    assert now["iso"] == iso
    assert now["utc_offset"] == iso[-6:]


@pytest.mark.usefixtures("fixed_now")
def test_time_fields() -> None:
    now = get_time("Asia/Shanghai")
    assert now["local_time"] == "2025-01-02 11:04:05"
    assert now["weekday"] == "Thursday"
    assert now["weekday_zh"] == "星期四"
    assert get_time("UTC-5")["weekday"] == "Wednesday"


def test_time_defaults_to_utc_now(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOOLCALL_NOW", raising=False)
    now = get_time()
    assert now["timezone"] == "UTC"
    assert now["utc_offset"] == "+00:00"


def test_time_naive_now_is_read_as_utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLCALL_NOW", "2025-06-01T12:00:00")
    assert get_time("Asia/Tokyo")["iso"] == "2025-06-01T21:00:00+09:00"


def test_time_bad_now_variable_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLCALL_NOW", "yesterday")
    with pytest.raises(ValueError, match="TOOLCALL_NOW"):
        get_time()


@pytest.mark.parametrize(
    ("zone", "fragment"),
    [
        ("Mars/Olympus", "unknown timezone 'Mars/Olympus'"),
        ("Asia/Shangai", "Did you mean 'Asia/Shanghai'?"),
        ("UTC+20", "out of range"),
    ],
)
def test_time_unknown_zone_says_how_to_fix(zone: str, fragment: str) -> None:
    with pytest.raises(ValueError) as caught:
        get_time(zone)
    assert fragment in str(caught.value)


@pytest.mark.parametrize("zone", ["", "  "])
def test_time_with_an_empty_zone_asks_for_the_place_instead_of_telling_utc(zone: str) -> None:
    """Left out, the zone is UTC; sent empty ("东京现在几点" to a model that could not fill it),
    UTC's time would be answered as Tokyo's."""
    with pytest.raises(ValueError) as caught:
        get_time(zone)
    message = str(caught.value)
    assert message.startswith(f"timezone is empty ({zone!r}).")
    assert "leave timezone out for UTC" in message and "Area/City" in message
    assert not re.search(r"\d", message.replace(repr(zone), ""))


@pytest.mark.parametrize("zone", ["Mars/Olympus", "呼和浩特", "Lyon"])
def test_time_unknown_zone_says_the_forms_without_a_sample_to_copy(zone: str) -> None:
    """The forms in words and placeholders: "such as Asia/Shanghai ... +08:00 ... Beijing" is
    copied whole by a small model, which then tells that zone's time as the one asked about."""
    with pytest.raises(ValueError) as caught:
        get_time(zone)
    message = str(caught.value)
    assert message.startswith(f"unknown timezone {zone!r}.")
    assert "Area/City" in message and "+HH:MM" in message and "city or country" in message
    told = message.replace(repr(zone), "")
    assert not re.search(r"\d", told)  # no offset to copy
    assert not [name for name in available_timezones() if "/" in name and name in told]
    assert "Beijing" not in message and "东京" not in message and "London" not in message


# --- units -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "source", "target", "result", "text"),
    [
        (25, "°C", "°F", 77, "25 °C = 77 °F"),
        (25, "celsius", "fahrenheit", 77, "25 °C = 77 °F"),
        (98.6, "degrees Fahrenheit", "摄氏度", 37, "98.6 °F = 37 °C"),
        (0, "K", "C", -273.15, "0 K = -273.15 °C"),
        (100, "℃", "kelvin", 373.15, "100 °C = 373.15 K"),
        (10, "km", "miles", 6.213711922, "10 km = 6.213711922 mi"),
        (1, "Mile", "公里", 1.609344, "1 mi = 1.609344 km"),
        (100, "inches", "cm", 254, "100 in = 254 cm"),
        (6, "feet", "米", 1.8288, "6 ft = 1.8288 m"),
        (3, "YARDS", "ft", 9, "3 yd = 9 ft"),
        (1, "斤", "克", 500, "1斤 = 500 g"),
        (1, "kg", "斤", 2, "1 kg = 2斤"),
        (2.5, "lbs", "kg", 1.133980925, "2.5 lb = 1.133980925 kg"),
        (1, "公斤", "pounds", 2.204622622, "1 kg = 2.204622622 lb"),
        (16, "oz", "lb", 1, "16 oz = 1 lb"),
        (1.5, "t", "kg", 1500, "1.5 t = 1500 kg"),
    ],
)
def test_convert_units(value: float, source: str, target: str, result: float, text: str) -> None:
    answer = convert_units(value, source, target)
    assert answer["result"] == result
    assert answer["text"] == text
    assert answer["value"] == value


def test_convert_reports_canonical_units() -> None:
    answer = convert_units(10, "kilometers", "Miles")
    assert (answer["from_unit"], answer["to_unit"], answer["dimension"]) == ("km", "mi", "length")


def test_convert_different_dimensions_lists_the_right_units() -> None:
    with pytest.raises(ValueError) as caught:
        convert_units(3, "kg", "km")
    message = str(caught.value)
    assert "cannot convert mass (kg) to length (km)" in message
    assert "lb" in message and "斤" in message
    assert "mi (" not in message
    # No form to copy naming a unit nobody asked for (it named g): the list says what there is.
    assert "form that works" not in message


def test_convert_unknown_unit_lists_units_of_the_other_units_kind() -> None:
    with pytest.raises(ValueError) as caught:
        convert_units(3, "furlong", "m")
    message = str(caught.value)
    assert message.startswith("unknown unit 'furlong'. Use one of the known length units:")
    assert "ft (foot)" in message and "kg" not in message


def test_convert_two_unknown_units_lists_everything() -> None:
    with pytest.raises(ValueError) as caught:
        convert_units(3, "smoot", "cubit")
    message = str(caught.value)
    assert "known units" in message and "km" in message and "kg" in message and "°F" in message


def test_convert_below_absolute_zero() -> None:
    with pytest.raises(ValueError, match="below absolute zero"):
        convert_units(-300, "C", "F")


# --- every error shows the form that works (issue 24) -----------------------------------------


@pytest.mark.parametrize(
    ("call", "form"),
    [
        (lambda: get_weather("Springfeld"), "get_weather(city='Springfield', day='today')"),
        (lambda: get_weather("the weather in Tokyo"), "get_weather(city='Tokyo', day='today')"),
        (lambda: get_weather("东京的天气", "tomorrow"), "get_weather(city='东京', day='tomorrow')"),
        (
            lambda: get_weather("New York City weather"),
            "get_weather(city='New York City', day='today')",
        ),
        (lambda: get_weather("weather in LA"), "get_weather(city='LA', day='today')"),
        (lambda: get_time("Asia/Shangai"), "get_time(timezone='Asia/Shanghai')"),
        (
            lambda: convert_units(26, "mile", "kilomter"),
            "convert_units(value=26, from_unit='mi', to_unit='km')",
        ),
    ],
)
def test_each_bundled_error_shows_the_form_that_works(call: Callable[[], Any], form: str) -> None:
    with pytest.raises(ValueError) as caught:
        call()
    assert f"The form that works: {form}" in str(caught.value)


@pytest.mark.parametrize(
    "call",
    [
        lambda: get_time("Mars/Olympus"),
        lambda: get_time("UTC+15"),
        lambda: convert_units(3, "furlong", "m"),
        lambda: get_weather("Atlantis", "tomorrow"),
        lambda: get_weather(" "),
        lambda: get_weather("Paris", "yesterday"),
    ],
)
def test_an_error_names_no_form_for_what_the_caller_did_not_mean(call: Callable[[], Any]) -> None:
    """A small model copies a form whole: told get_weather(city='Paris', ...) of 呼和浩特,
    Qwen2.5-0.5B gave Paris' weather as Hohhot's (test_realmodel_replays). Asia/Shanghai's time
    for Mars, +08:00 for UTC+15 or 3 km for 3 furlongs would be as wrong."""
    with pytest.raises(ValueError) as caught:
        call()
    assert "form that works" not in str(caught.value)
