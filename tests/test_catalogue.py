"""examples/catalogue: the 200-tool catalogue for retrieval (issue 13) and its questions.

The catalogue must load cleanly beside the bundled tools, look like a real product's tools (no
numbered templates, every tool and parameter described), and each domain's tools must do real
work: a sample from every file is called here with real arguments and checked against answers
worked out by hand or from published references."""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolcall_cli.tools.loader import bundled_tools_dir, load_tools

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

CATALOGUE = Path(__file__).resolve().parent.parent / "examples" / "catalogue"
_LOADED = load_tools([CATALOGUE])
_TOOLS = list(_LOADED.registry)
_QUESTIONS: list[dict[str, Any]] = tomllib.loads(
    (CATALOGUE / "questions.toml").read_text(encoding="utf-8")
)["questions"]
_HAN = re.compile(r"[\u4e00-\u9fff]")


def call(name: str) -> Callable[..., Any]:
    found = _LOADED.registry.get(name)
    assert found is not None, f"catalogue tool {name} did not load"
    return found.func


# --- the catalogue as a whole -------------------------------------------------------------------


def test_the_catalogue_loads_with_no_problem_lines_and_holds_about_200_tools() -> None:
    assert _LOADED.problems == []
    assert 190 <= len(_TOOLS) <= 260


def test_it_loads_beside_the_bundled_tools_without_a_name_clash() -> None:
    both = load_tools([bundled_tools_dir(), CATALOGUE])
    assert both.problems == []
    assert len(list(both.registry)) == len(_TOOLS) + len(
        list(load_tools([bundled_tools_dir()]).registry)
    )


def test_every_domain_file_brings_a_real_share_of_tools() -> None:
    per_file = Counter(Path(item.source).name for item in _TOOLS)
    assert len(per_file) >= 15
    assert min(per_file.values()) >= 8, per_file


def test_names_are_not_a_numbered_template() -> None:
    names = [item.name for item in _TOOLS]
    assert len(set(names)) == len(names)
    without_digits = Counter(re.sub(r"\d", "", name) for name in names)
    assert [name for name, count in without_digits.items() if count > 1] == []
    assert [name for name in names if re.search(r"_\d+$|^tool_?\d|\d+$", name)] == []
    # Varied wording: no one word starts more than a tenth of the names.
    first_words = Counter(name.split("_")[0] for name in names)
    assert first_words.most_common(1)[0][1] <= len(names) // 10


def test_every_tool_and_parameter_is_described_and_only_reads() -> None:
    for item in _TOOLS:
        assert len(item.spec.description.splitlines()[0]) >= 20, item.name
        for parameter, schema in item.spec.parameters["properties"].items():
            assert schema.get("description"), f"{item.name}.{parameter}"
        assert item.permission == "read", item.name
        # Half the questions are Chinese: every tool has Chinese words too, as a bilingual
        # product would (the bundled tools do the same).
        assert _HAN.search(item.spec.description), item.name
    descriptions = [item.spec.description.splitlines()[0] for item in _TOOLS]
    assert len(set(descriptions)) == len(descriptions)


# --- the questions ------------------------------------------------------------------------------


def test_the_questions_are_many_and_in_both_languages() -> None:
    assert len(_QUESTIONS) >= 70
    languages = Counter(q["lang"] for q in _QUESTIONS)
    assert languages["zh"] >= 30
    assert languages["en"] >= 30
    assert set(languages) == {"zh", "en"}
    for q in _QUESTIONS:
        assert bool(_HAN.search(q["question"])) == (q["lang"] == "zh"), q["question"]


def test_every_question_names_tools_that_exist() -> None:
    known = {item.name for item in load_tools([bundled_tools_dir(), CATALOGUE]).registry}
    for q in _QUESTIONS:
        assert q["tool"] in known, q
        assert set(q.get("also", [])) <= known - {q["tool"]}, q
        assert set(q) <= {"lang", "question", "tool", "also"}, q


def test_questions_do_not_spell_out_their_tool() -> None:
    for q in _QUESTIONS:
        text = q["question"].lower()
        assert q["tool"] not in text, q
        assert q["tool"].replace("_", " ") not in text, q


def test_questions_cover_every_domain_and_the_bundled_tools() -> None:
    source = {item.name: Path(item.source).name for item in _TOOLS}
    covered = {source[q["tool"]] for q in _QUESTIONS if q["tool"] in source}
    assert covered == {Path(item.source).name for item in _TOOLS}
    asked = {q["tool"] for q in _QUESTIONS}
    assert {"get_weather", "get_time", "calculate", "convert_units"} <= asked


# --- real work, at least one tool of every file ---------------------------------------------------


def test_finance() -> None:
    assert call("loan_monthly_payment")(100000, 5, 30)["monthly_payment"] == 536.82
    growth = call("compound_interest")(1000, 5, 10, compounds_per_year=1)
    assert growth["future_value"] == 1628.89
    assert call("internal_rate_of_return")([-1000, 1100])["irr_percent"] == pytest.approx(
        10, abs=1e-3
    )
    assert call("break_even_point")(40000, 18, 6)["units"] == 3334
    assert call("equal_principal_repayment")(120000, 6, 10)["first_payment"] == 1600.0


def test_health() -> None:
    assert call("body_mass_index")(78, 172) == {"bmi": 26.4, "category": "overweight"}
    assert call("basal_metabolic_rate")("female", 60, 165, 35)["bmr_kcal_per_day"] == 1295
    assert call("pregnancy_due_date")("2025-03-10")["due_date"] == "2025-12-15"
    assert call("calories_burned")("swimming", 65, 60)["kcal"] == 410


def test_dates_and_time_zones() -> None:
    assert call("days_between_dates")("2025-03-03", "2025-12-25")["days"] == 297
    assert call("add_to_date")("2025-01-31", months=1)["date"] == "2025-02-28"
    summer = call("convert_time_between_zones")(
        "2025-06-10 09:30", "America/Los_Angeles", "Europe/Berlin"
    )
    assert summer["converted"] == "2025-06-10 18:30"
    assert (
        call("unix_timestamp_to_datetime")(1700000000, "Asia/Shanghai")["datetime"]
        == "2023-11-15T06:13:20+08:00"
    )
    assert (
        call("business_days_between")("2025-07-01", "2025-07-31", ["2025-07-04"])["business_days"]
        == 22
    )
    assert call("leap_year_check")(1900)["leap"] is False
    assert call("parse_duration")("3小时20分钟")["seconds"] == 12000
    assert call("age_on_date")("1990-05-17", "2025-10-01")["years"] == 35


def test_calendar_and_holidays() -> None:
    assert call("easter_date")(2027)["easter_sunday"] == "2027-03-28"
    assert call("chinese_new_year_date")(2026)["date"] == "2026-02-17"
    assert call("chinese_zodiac_animal")("1996-01-20")["animal_zh"] == "猪"  # before 1996's 春节
    assert call("star_sign")("08-15")["sign_zh"] == "狮子座"
    assert call("us_federal_holidays")(2026)["holidays"]["Thanksgiving Day"] == "2026-11-26"
    assert call("uk_bank_holidays")(2026)["holidays"]["Boxing Day"] == "2026-12-28"


def test_text() -> None:
    assert call("edit_distance")("kitten", "sitting")["distance"] == 3
    assert call("change_case")("getUserAccountId", "snake")["result"] == "get_user_account_id"
    assert call("slugify")("Crème Brûlée: A Recipe!")["slug"] == "creme-brulee-a-recipe"
    assert call("palindrome_check")("A man, a plan, a canal: Panama")["palindrome"] is True
    found = call("extract_emails_and_links")("mail a@b.com, see https://x.org/p. Or a@b.com")
    assert found == {"emails": ["a@b.com"], "links": ["https://x.org/p"]}


def test_encoding_and_hashing() -> None:
    expected = "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9"
    assert call("hash_text")("hello world")["hex"] == expected
    assert call("base64_decode")("aGVsbG8gd29ybGQ=")["text"] == "hello world"
    assert call("morse_code")("SOS HELP")["morse"] == "... --- ... / .... . .-.. .--."
    assert call("url_encode")("北京 天气")["encoded"] == "%E5%8C%97%E4%BA%AC%20%E5%A4%A9%E6%B0%94"
    token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI0MiJ9.c2ln"
    assert call("decode_jwt")(token)["claims"] == {"sub": "42"}
    assert call("caesar_cipher")("Hello", 13)["text"] == "Uryyb"


def test_networking() -> None:
    subnet = call("subnet_calculator")("172.16.40.0/22")
    assert (subnet["netmask"], subnet["usable_hosts"]) == ("255.255.252.0", 1022)
    assert call("ip_in_network")("10.20.30.40", "10.20.0.0/16")["inside"] is True
    assert call("http_status_meaning")(429)["phrase"] == "Too Many Requests"
    assert call("well_known_port")("postgresql")["port"] == 5432
    assert call("ip_range_to_cidrs")("10.0.0.0", "10.0.0.11")["cidrs"] == [
        "10.0.0.0/29",
        "10.0.0.8/30",
    ]
    assert call("download_time")(4.5, "GB", 100)["seconds"] == 360.0


def test_geo_and_travel() -> None:
    assert call("distance_between_cities")("上海", "London")["km"] == pytest.approx(9200, abs=50)
    assert call("country_capital")("澳大利亚")["capital"] == "Canberra"
    assert call("country_dialing_code")("Kenya")["calling_code"] == "+254"
    assert call("road_trip_fuel_cost")(800, 7, 7.8, 4)["per_person"] == 109.2
    assert call("geohash_encode")(57.64911, 10.40744, 11)["geohash"] == "u4pruydqqvj"
    assert call("dms_to_decimal")("40°26'46\"N")["decimal"] == pytest.approx(40.446111, abs=1e-6)


def test_cooking_and_measures() -> None:
    assert call("convert_cooking_volume")(0.75, "cup", "ml")["result"] == pytest.approx(177.441)
    assert call("cups_to_grams")("all-purpose flour", 2)["grams"] == 250
    assert call("convert_area")(1, "亩", "平方米")["result"] == pytest.approx(666.667)
    assert call("convert_pressure")(35, "psi", "bar")["result"] == pytest.approx(2.41317)
    assert call("fuel_economy_convert")(6.5, "l/100km")["mpg_us"] == 36.2
    assert call("scale_recipe")({"eggs": 2, "flour g": 250}, 4, 10)["ingredients"] == {
        "eggs": 5,
        "flour g": 625,
    }


def test_maths_and_statistics() -> None:
    summary = call("describe_numbers")([78, 85, 92, 68, 85, 90])
    assert (summary["mean"], summary["median"], summary["modes"]) == (83.0, 85.0, [85.0])
    assert call("prime_factorization")(360)["text"] == "360 = 2^3 × 3^2 × 5"
    assert call("solve_quadratic")(2, -3, -5)["real_roots"] == [-1.0, 2.5]
    assert call("combinations_and_permutations")(52, 5)["combinations"] == 2598960
    assert call("roman_numerals")("MCMXCIV")["number"] == 1994
    assert call("percentage_change")(120, 150)["percent_change"] == 25.0
    fit = call("linear_regression")([1, 2, 3, 4], [3, 5, 7, 9])
    assert (fit["slope"], fit["intercept"], fit["r_squared"]) == (2.0, 1.0, 1.0)


def test_developer_utilities() -> None:
    assert call("convert_number_base")("0xFF3A")["decimal"] == 65338
    runs = call("cron_next_runs")("*/15 9-17 * * 1-5", "2025-03-07 16:50", 3)["runs"]
    assert runs == ["2025-03-07 17:00", "2025-03-07 17:15", "2025-03-07 17:30"]
    assert call("compare_versions")("1.10.0", "1.9.12")["newer"] == "1.10.0"
    assert call("compare_versions")("2.0.0-rc.1", "2.0.0")["result"] == -1
    perms = call("explain_file_permissions")("640")
    assert (perms["symbolic"], perms["permissions"]["group"]) == ("rw-r-----", ["read"])
    assert call("regex_test")(r"^\d{3}-\d{4}$", "555-1234")["count"] == 1
    assert call("human_readable_size")(1536)["text"] == "1.5 KiB"


def test_colour_and_design() -> None:
    assert call("contrast_ratio")("#777777", "white")["ratio"] == 4.48
    colour = call("convert_color")("#3498db")
    assert (colour["rgb"], colour["hsl"]) == ([52, 152, 219], [204, 70, 53])
    assert call("color_harmony")("#ff0000", "triadic")["palette"] == [
        "#ff0000",
        "#00ff00",
        "#0000ff",
    ]
    assert call("print_size_at_dpi")(6000, 4000, 300)["cm"] == [50.8, 33.9]


def test_science() -> None:
    assert call("molar_mass")("CaCO3")["grams_per_mol"] == 100.086
    assert call("molar_mass")("Ca(OH)2")["grams_per_mol"] == 74.092
    tungsten = call("element_lookup")("钨")
    assert (tungsten["symbol"], tungsten["atomic_number"]) == ("W", 74)
    assert call("ohms_law")(voltage=12, current=0.5)["resistance"] == 24.0
    assert call("radioactive_decay")(100, 5730, 10000)["remaining"] == pytest.approx(29.8, abs=0.05)
    assert call("resistor_color_code")(["brown", "black", "red", "gold"])["ohms"] == 1000
    assert call("ph_calculator")(ph=3)["hydrogen_ion_molar"] == 0.001
    assert call("ph_calculator")(hydrogen_ion_molar=1e-9)["nature"] == "basic"
    assert call("moon_phase")("2025-09-07")["phase"] == "full moon"  # the 7 September 2025 eclipse


def test_chinese_language() -> None:
    assert call("rmb_amount_in_words")(3508.20)["words"] == "叁仟伍佰零捌元贰角"
    assert call("rmb_amount_in_words")(100.05)["words"] == "壹佰元零伍分"
    assert call("china_id_card_check")("11010519491231002X")["sex"] == "female"
    assert call("china_id_card_check")("110105194912310021")["valid"] is False
    assert call("sexagenary_year")(2025) == {"ganzhi": "乙巳", "animal": "蛇"}
    assert call("number_to_english_words")(4250)["words"] == "four thousand two hundred fifty"
    assert call("number_to_chinese")(10086)["chinese"] == "一万零八十六"
    assert call("chinese_to_number")("三千零五十")["number"] == 3050
    assert call("fullwidth_halfwidth")("ＡＢＣ１２３")["text"] == "ABC123"


def test_document_helpers() -> None:
    table = call("csv_to_markdown")("name,role\nAda,engineer")["markdown"]
    assert table == "| name | role |\n| :--- | :--- |\n| Ada | engineer |"
    cleaned = call("redact_personal_data")("mail bob@x.com or 13812345678")
    assert cleaned["text"] == "mail [EMAIL] or [PHONE]"
    assert call("isbn_check")("978-0-306-40615-7") == {
        "valid": True,
        "isbn13": "9780306406157",
        "isbn10": "0306406152",
    }
    assert call("fill_template")("Dear $name, ${x}", {"name": "Li"}) == {
        "text": "Dear Li, ${x}",
        "missing": ["x"],
    }


def test_hr_and_payroll() -> None:
    march = call("china_income_tax_withholding")(20000, 3)
    assert (march["tax_this_month"], march["annual_tax"]) == (1080.0, 19080.0)
    assert call("china_annual_bonus_tax")(50000)["tax"] == 4790.0
    assert call("us_federal_income_tax")(100000)["tax"] == 13841.0
    assert call("china_severance_pay")(15000, 6, 8)["severance"] == 105000.0
    assert call("overtime_pay")(50, holiday_hours=8)["total"] == 1200.0
    assert call("timesheet_hours")(["09:00-17:30", "22:00-06:00"], 30)["hours"] == 15.5


def test_ecommerce_and_pricing() -> None:
    assert call("apply_discounts")(399, 20, 50, 300)["final_price"] == 269.2
    assert call("vat_calculator")(1130, 13, True)["tax"] == 130.0
    assert call("chargeable_shipping_weight")(8, 60, 40, 40)["chargeable_kg"] == 19.2
    assert call("compare_unit_prices")({"500g": [12.9, 500], "1kg": [22.5, 1000]})["best"] == "1kg"
    assert call("price_for_target_margin")(4.2, 60)["price"] == 10.5
    assert call("card_number_check")("4111 1111 1111 1111")["valid"] is True
    assert call("barcode_check_digit")("4006381333931")["valid"] is True
    assert call("barcode_check_digit")("400638133393", compute=True)["check_digit"] == 1
    assert call("format_price")(1234567.891, "JPY")["text"] == "¥1,234,568"


def test_tool_errors_say_how_to_fix_the_call() -> None:
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        call("days_between_dates")("March 3", "2025-12-25")
    with pytest.raises(ValueError, match="unknown element"):
        call("molar_mass")("Xq2")
    with pytest.raises(ValueError, match="never clears"):
        call("credit_card_payoff_time")(10000, 24, 100)
    with pytest.raises(ValueError, match="gas mark"):
        call("oven_temperature")()
    with pytest.raises(ValueError, match="must be IPv4, or both IPv6"):
        call("ip_range_to_cidrs")("10.0.0.1", "::1")
