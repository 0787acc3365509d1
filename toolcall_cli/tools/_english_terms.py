"""Words for what a text writes without words: data for the ranker.

Why: BM25 matches only words two texts share. People write `17.5% of 2,340 + 96`, `#e67e22`
or `MCMXCIV` where a tool's description says "percent", "plus", "hex colour" or "Roman
numeral". Each symbol and each recognisable kind of value (its shape) is read as the words a
description would use for it, on both sides, so a question and a tool meet on those words.

And why a table of English words: a question and a tool often say one thing in two words
(`borrow` and `loan`, `colour` and `color`). SYNONYMS adds, for a word of the question, the
words a thesaurus gives for it, as the bridge table does for Chinese.

Edit it as data; every value is plain English words separated by spaces.
"""

from __future__ import annotations

import re

SYMBOLS: dict[str, str] = {
    "%": "percent",
    "‰": "per mille",
    "+": "plus add",
    "×": "times multiply",
    "÷": "divide",
    "√": "square root",
    "²": "square",
    "³": "cube",
    "π": "pi",
    "°C": "celsius",
    "℃": "celsius",
    "°F": "fahrenheit",
    "℉": "fahrenheit",
    "°": "degree",
}
"""A symbol anywhere in the text, and the words for it. Longer keys are read first (`°C` before
`°`). Symbols that are also punctuation (`-`, `/`, `*`, `=`) are left to SHAPES, which reads
them only between numbers."""

_NUMBER = r"\(?\s*\d[\d,]*(?:\.\d+)?\s*\)?"
# `-` and `/` join numbers in dates (2025-06-10, 3/10), ranges (2-3) and addresses
# (10.0.0.0/8) too, so they count as operators only with spaces around them.
_OPERATOR = r"(?:\s*[+*×÷^]\s*|\s+[-/]\s+)"

SHAPES: list[tuple[re.Pattern[str], str]] = [
    # Numbers joined by operators: `(128 + 256) × 3 ÷ 4`, `2^10`, `12*5+3`.
    (
        re.compile(rf"(?<![\w.:/-]){_NUMBER}(?:{_OPERATOR}{_NUMBER})+(?![\w.:/])"),
        "arithmetic expression",
    ),
    # A CSS hex colour: #e67e22, #fff.
    (re.compile(r"#(?:[0-9a-fA-F]{6}|[0-9a-fA-F]{3})\b"), "hex colour color"),
    # An IPv4 address, or a network in CIDR form: 192.168.1.10, 10.0.0.0/8.
    (re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}\b"), "ip address"),
    (re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}/\d{1,2}\b"), "cidr network subnet"),
    (re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"), "email address"),
    (re.compile(r"\bhttps?://\S+"), "url link"),
    # A Roman numeral of four letters or more (shorter ones are common words and initials).
    (
        re.compile(
            r"\b(?=[MDCLXVI]{4,}\b)M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})\b"
        ),
        "roman numeral",
    ),
    # Base64: a run of letters in both cases and digits, either ending in `=` padding or long
    # and holding digits in two places apart (an identifier like `getUserById2024` holds one).
    (
        re.compile(
            r"(?<![\w+/])(?=[\w+/]*[a-z])(?=[\w+/]*[A-Z])"
            r"(?:[A-Za-z0-9+/]{8,}={1,2}|(?=(?:[A-Za-z0-9+/]*?[A-Za-z+/]\d){2})[A-Za-z0-9+/]{16,})(?![\w+/=])"
        ),
        "base64 encoded",
    ),
    # A date written with numbers: 2025-06-10, 2025/6/10, 2025年3月10日.
    (re.compile(r"\b\d{4}[-/]\d{1,2}[-/]\d{1,2}\b|\d{4}年\d{1,2}月\d{1,2}[日号]"), "date"),
    # A clock time: 9:30, 21:05.
    (re.compile(r"\b\d{1,2}:\d{2}\b"), "time"),
]
"""A kind of value recognised by its shape, and the words a description uses for that kind."""


SYNONYMS: dict[str, str] = {
    # British and American spellings
    "colour": "color",
    "color": "colour",
    "metre": "meter",
    "litre": "liter",
    "centre": "center",
    "analyse": "analyze",
    "organise": "organize",
    "summarise": "summarize",
    "normalise": "normalize",
    "favourite": "favorite",
    "cheque": "check",
    "programme": "program",
    "travelling": "traveling",
    "grey": "gray",
    # money
    "borrow": "loan",
    "lend": "loan",
    "owe": "debt",
    "debt": "owe loan",
    "mortgage": "loan",
    "earn": "income",
    "earnings": "income",
    "wage": "salary pay",
    "pay": "payment",
    "cost": "price",
    "price": "cost",
    "cheap": "price cost",
    "expensive": "price cost",
    "buy": "purchase",
    "purchase": "buy",
    "sell": "sale",
    "profit": "gain return",
    "gain": "profit",
    "invest": "investment",
    "save": "savings",
    "fee": "charge cost",
    # quantities and measures
    "far": "distance",
    "long": "length duration",
    "tall": "height",
    "high": "height",
    "heavy": "weight",
    "weigh": "weight",
    "old": "age",
    "hot": "temperature",
    "cold": "temperature",
    "warm": "temperature",
    "fast": "speed",
    "quick": "speed",
    "big": "size",
    "large": "size",
    "small": "size",
    "average": "mean",
    "mean": "average",
    "spread": "dispersion deviation",
    "chance": "probability",
    "odds": "probability",
    "likely": "probability",
    "choose": "select pick",
    "pick": "select choose",
    "count": "number",
    "total": "sum",
    "sum": "total",
    "double": "twice",
    "half": "halve",
    # time
    "born": "birth",
    "birthday": "birth",
    "when": "date",
    "yearly": "annual",
    "annual": "yearly",
    "weekly": "week",
    "daily": "day",
    "hourly": "hour",
    "deadline": "due date",
    # people and places
    "phone": "telephone call",
    "dial": "phone call",
    "call": "phone",
    "ring": "phone call",
    "trip": "travel journey",
    "journey": "travel trip",
    "abroad": "foreign country",
    "nation": "country",
    "town": "city",
    # text
    "word": "text",
    "shorten": "truncate abbreviate",
    "similar": "similarity alike",
    "alike": "similar",
    "copy": "duplicate",
    "mistake": "error",
    "typo": "spelling error",
    "check": "validate verify",
    "valid": "validate",
    "fix": "correct repair",
    "meaning": "definition",
    "reverse": "backwards",
    "secret": "password",
    "scramble": "encrypt",
}
"""A question's word (read as its stem: `borrowing` is `borrow`), and words a thesaurus gives
for it. Only general vocabulary: no word here was picked off a question the ranker missed."""
