"""Chinese text and numbers: 大写金额, Chinese numerals, ID and credit-code checks, full-width
characters, 干支 years, 时辰, and English number words."""

from __future__ import annotations

import re
import unicodedata
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Literal

from toolcall_cli import tool

_UPPER_DIGITS = "零壹贰叁肆伍陆柒捌玖"
_LOWER_DIGITS = "零一二三四五六七八九"
_UPPER_UNITS = ("", "拾", "佰", "仟")
_LOWER_UNITS = ("", "十", "百", "千")
_SECTIONS = ("", "万", "亿", "万亿")
_STEMS = "甲乙丙丁戊己庚辛壬癸"
_BRANCHES = "子丑寅卯辰巳午未申酉戌亥"
_ANIMALS = "鼠牛虎兔龙蛇马羊猴鸡狗猪"
_HOURS = (
    "子时",
    "丑时",
    "寅时",
    "卯时",
    "辰时",
    "巳时",
    "午时",
    "未时",
    "申时",
    "酉时",
    "戌时",
    "亥时",
)
_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"
_CREDIT_CHARS = "0123456789ABCDEFGHJKLMNPQRTUWXY"
_CREDIT_WEIGHTS = (1, 3, 9, 27, 19, 26, 16, 17, 20, 29, 25, 13, 8, 24, 10, 30, 28)
_ONES = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def _four_digits(n: int, digits: str, units: tuple[str, ...]) -> str:
    """0-9999 in Chinese, with 零 for inner gaps and no leading 零."""
    out, zero = "", False
    for position in range(3, -1, -1):
        d = n // 10**position % 10
        if d == 0:
            zero = bool(out)
        else:
            out += (digits[0] if zero else "") + digits[d] + units[position]
            zero = False
    return out


def _chinese_integer(n: int, digits: str, units: tuple[str, ...]) -> str:
    if n == 0:
        return digits[0]
    groups = []
    while n:
        groups.append(n % 10000)
        n //= 10000
    if len(groups) > len(_SECTIONS):
        raise ValueError("the number is too large")
    out, gap = "", False
    for index in range(len(groups) - 1, -1, -1):
        group = groups[index]
        if group == 0:
            gap = bool(out)
            continue
        if out and (gap or group < 1000):
            out += digits[0]
        out += _four_digits(group, digits, units) + _SECTIONS[index]
        gap = False
    return out


@tool(permission="read")
def rmb_amount_in_words(amount: float) -> dict[str, Any]:
    """Write a money amount in Chinese capital numerals as required on cheques, receipts,
    invoices and contracts (e.g. 壹万元整). Use it for RMB amounts in words. For plain Chinese
    numerals use number_to_chinese; for English words use number_to_english_words.
    中文：人民币大写、大写金额、发票金额大写、支票。

    Args:
        amount: The amount in yuan, up to two decimals, e.g. 1234.56.
    """
    if not 0 <= amount < 1e16:
        raise ValueError("the amount must be between 0 and 10^16")
    cents = int(Decimal(str(amount)).quantize(Decimal("0.01"), ROUND_HALF_UP) * 100)
    yuan, jiao, fen = cents // 100, cents // 10 % 10, cents % 10
    text = _chinese_integer(yuan, _UPPER_DIGITS, _UPPER_UNITS) + "元" if yuan else ""
    if jiao == 0 and fen == 0:
        return {"words": (text or "零元") + "整"}
    if jiao:
        text += _UPPER_DIGITS[jiao] + "角"
    elif yuan:
        text += "零"
    if fen:
        text += _UPPER_DIGITS[fen] + "分"
    return {"words": text}


@tool(permission="read")
def number_to_chinese(number: int, style: Literal["lower", "upper"] = "lower") -> dict[str, Any]:
    """Write a whole number in Chinese numerals, ordinary (一万零八十六) or financial capital
    (壹万零捌拾陆) style. Use it for 'how do you write 10086 in Chinese'. For money amounts with
    元角分 use rmb_amount_in_words; for the reverse use chinese_to_number.
    中文：阿拉伯数字转中文、中文数字、数字大写。

    Args:
        number: The whole number.
        style: lower (一二三) or upper financial characters (壹贰叁).
    """
    digits, units = (
        (_LOWER_DIGITS, _LOWER_UNITS) if style == "lower" else (_UPPER_DIGITS, _UPPER_UNITS)
    )
    text = _chinese_integer(abs(number), digits, units)
    if style == "lower" and text.startswith("一十"):
        text = text.removeprefix("一")  # 十五 and 十万, as people write them, not 一十五
    return {"chinese": ("负" if number < 0 else "") + text}


@tool(permission="read")
def chinese_to_number(text: str) -> dict[str, Any]:
    """Read a number written in Chinese characters (三千零五十, 两万, 壹佰贰拾) as digits. Use it
    to turn Chinese numerals into Arabic numbers. For the reverse use number_to_chinese.
    中文：中文数字转阿拉伯数字、大写数字转换、汉字数字。

    Args:
        text: The Chinese numeral.
    """
    values = {c: i for i, c in enumerate(_LOWER_DIGITS)} | {
        c: i for i, c in enumerate(_UPPER_DIGITS)
    }
    values.update({"两": 2, "〇": 0})
    small = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
    big = {"万": 10**4, "萬": 10**4, "亿": 10**8, "億": 10**8}
    total, section, digit = 0, 0, 0
    body = text.strip()
    negative = body.startswith("负")
    for ch in body.removeprefix("负"):
        if ch in values:
            digit = values[ch]
        elif ch in small:
            section += (digit or 1) * small[ch]
            digit = 0
        elif ch in big:
            total = (total + section + digit) * big[ch]
            section, digit = 0, 0
        else:
            raise ValueError(f"{ch!r} is not a Chinese numeral character")
    value = total + section + digit
    return {"number": -value if negative else value}


@tool(permission="read")
def china_id_card_check(id_number: str) -> dict[str, Any]:
    """Validate an 18-digit PRC resident identity card number: check digit, birth date, sex and
    region code. Use it for 'is this ID number valid' and reading the birthday or gender in an
    ID. For company credit codes use credit_code_check.
    中文：身份证号码校验、身份证真假、身份证出生日期、性别。

    Args:
        id_number: The 18-character ID number (last may be X).
    """
    text = id_number.strip().upper()
    if not re.fullmatch(r"\d{17}[\dX]", text):
        return {"valid": False, "reason": "an ID number is 17 digits and a digit or X"}
    expected = _ID_CHECK[sum(int(d) * w for d, w in zip(text, _ID_WEIGHTS, strict=False)) % 11]
    try:
        born = date(int(text[6:10]), int(text[10:12]), int(text[12:14]))
    except ValueError:
        return {"valid": False, "reason": "the birth date part is not a real date"}
    if text[17] != expected:
        return {"valid": False, "reason": f"check digit should be {expected}"}
    return {
        "valid": True,
        "birth_date": born.isoformat(),
        "sex": "male" if int(text[16]) % 2 else "female",
        "region_code": text[:6],
    }


@tool(permission="read")
def credit_code_check(code: str) -> dict[str, Any]:
    """Validate a Chinese 18-character Unified Social Credit Code of a company or organisation by
    its check character. Use it to check a business licence or tax number. For personal ID
    numbers use china_id_card_check.
    中文：统一社会信用代码、营业执照号、税号校验、企业代码。

    Args:
        code: The 18-character code.
    """
    text = code.strip().upper()
    if len(text) != 18 or any(c not in _CREDIT_CHARS for c in text):
        return {"valid": False, "reason": "18 characters from 0-9 and A-Y without I, O, S, V, Z"}
    total = sum(_CREDIT_CHARS.index(c) * w for c, w in zip(text, _CREDIT_WEIGHTS, strict=False))
    expected = _CREDIT_CHARS[(31 - total % 31) % 31]
    return {"valid": text[17] == expected, "expected_check_character": expected}


@tool(permission="read")
def fullwidth_halfwidth(text: str, to: Literal["half", "full"] = "half") -> dict[str, Any]:
    """Convert letters, digits and punctuation between full-width and half-width forms. Use it to
    clean text typed with a Chinese IME or normalise form input. For punctuation style only use
    chinese_punctuation.
    中文：全角半角转换、全角字符、半角字符。

    Args:
        text: The text.
        to: half (ＡＢＣ１２３ -> ABC123) or full (ABC123 -> ＡＢＣ１２３).
    """
    out = []
    for ch in text:
        code = ord(ch)
        if to == "half":
            code = 0x20 if code == 0x3000 else code - 0xFEE0 if 0xFF01 <= code <= 0xFF5E else code
        else:
            code = 0x3000 if code == 0x20 else code + 0xFEE0 if 0x21 <= code <= 0x7E else code
        out.append(chr(code))
    return {"text": "".join(out)}


@tool(permission="read")
def count_chinese_characters(text: str) -> dict[str, Any]:
    """Count Chinese characters, Latin words, digits and punctuation separately in mixed
    Chinese-English text. Use it for Chinese essay or article word limits. For English word
    counts use word_count.
    中文：汉字个数、中文字数统计、字数、作文字数。

    Args:
        text: The text.
    """
    han = len(re.findall(r"[\u3400-\u9fff\uf900-\ufaff]", text))
    punctuation = sum(1 for c in text if unicodedata.category(c).startswith("P"))
    return {
        "han_characters": han,
        "latin_words": len(re.findall(r"[A-Za-z]+", text)),
        "digits": sum(c.isdigit() for c in text),
        "punctuation": punctuation,
    }


@tool(permission="read")
def sexagenary_year(year: int) -> dict[str, Any]:
    """The sexagenary (heavenly stem and earthly branch) name of a year, e.g. 2024 -> 甲辰, with
    its zodiac animal. Use it for 'what 干支 year is it' or historical year names. For a
    birthday's zodiac animal use chinese_zodiac_animal.
    中文：天干地支、干支纪年、甲辰年、农历年份名称。

    Args:
        year: The Gregorian year (its lunar year mostly overlaps it).
    """
    offset = year - 4  # 4 AD was 甲子
    return {"ganzhi": _STEMS[offset % 10] + _BRANCHES[offset % 12], "animal": _ANIMALS[offset % 12]}


@tool(permission="read")
def traditional_chinese_hour(time: str) -> dict[str, Any]:
    """Which of the twelve traditional two-hour periods (shichen) a clock time falls in, e.g.
    子时 is 23:00-01:00. Use it for birth hour (生辰) and classical time questions.
    中文：时辰、子时午时、十二时辰、几点是什么时辰。

    Args:
        time: The time, HH:MM (24-hour).
    """
    hour = int(time.strip().split(":")[0])
    if not 0 <= hour <= 23:
        raise ValueError("the hour must be 0-23")
    index = (hour + 1) // 2 % 12
    start = (index * 2 - 1) % 24
    return {
        "shichen": _HOURS[index],
        "branch": _BRANCHES[index],
        "span": f"{start:02d}:00-{(start + 2) % 24:02d}:00",
    }


def _english_below_thousand(n: int) -> str:
    hundreds, rest = divmod(n, 100)
    parts = [f"{_ONES[hundreds]} hundred"] if hundreds else []
    if rest:
        tens, ones = divmod(rest, 10)
        parts.append(
            _ONES[rest] if rest < 20 else _TENS[tens] + (f"-{_ONES[ones]}" if ones else "")
        )
    return " ".join(parts)


@tool(permission="read")
def number_to_english_words(number: int) -> dict[str, Any]:
    """Spell out a whole number in English words, as on a cheque (1234 -> one thousand two
    hundred thirty-four). Use it for English amounts in words. For Chinese numerals use
    number_to_chinese.
    中文：数字转英文、英文大写金额、英文数字读法。

    Args:
        number: The whole number, below one quadrillion in size.
    """
    if abs(number) >= 10**15:
        raise ValueError("the number is too large")
    if number == 0:
        return {"words": "zero"}
    scales = ["", "thousand", "million", "billion", "trillion"]
    n, parts, index = abs(number), [], 0
    while n:
        n, chunk = divmod(n, 1000)
        if chunk:
            parts.append(
                _english_below_thousand(chunk) + (f" {scales[index]}" if scales[index] else "")
            )
        index += 1
    return {"words": ("minus " if number < 0 else "") + " ".join(reversed(parts))}


@tool(permission="read")
def chinese_punctuation(text: str, to: Literal["chinese", "ascii"] = "chinese") -> dict[str, Any]:
    """Swap ASCII punctuation for Chinese full-width punctuation in Chinese prose (,.? ->
    ，。？), or back. Use it to fix mixed punctuation in Chinese text. For letters and digits
    too use fullwidth_halfwidth.
    中文：中英文标点转换、中文标点、标点符号。

    Args:
        text: The text.
        to: chinese (ASCII to Chinese marks) or ascii (Chinese marks to ASCII).
    """
    pairs = {
        ",": "，",
        ".": "。",
        "?": "？",
        "!": "！",
        ":": "：",
        ";": "；",
        "(": "（",
        ")": "）",
    }
    if to == "chinese":
        # Only marks next to a Chinese character: 3.14 and URLs keep their dots.
        out = re.sub(
            r"(?<=[\u4e00-\u9fff])[,.?!:;]|[,.?!:;](?=[\u4e00-\u9fff])",
            lambda m: pairs[m.group(0)],
            text,
        )
        out = re.sub(r"\(([^()]*[\u4e00-\u9fff][^()]*)\)", r"（\1）", out)
    else:
        back: dict[str, str | int | None] = {v: k for k, v in pairs.items()}
        out = text.translate(str.maketrans(back))
    return {"text": out}
