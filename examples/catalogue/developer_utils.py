"""Developer utilities: number bases, JSON, regex, semantic versions, cron, permissions, sizes."""

from __future__ import annotations

import csv
import io
import json
import math
import re
import stat
import uuid
from datetime import datetime, timedelta
from typing import Any, Literal

from toolcall_cli import tool

_SEMVER = re.compile(
    r"^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?(?:\+([0-9A-Za-z.-]+))?$"
)
_CRON_FIELDS = (
    ("minute", 0, 59),
    ("hour", 0, 23),
    ("day", 1, 31),
    ("month", 1, 12),
    ("weekday", 0, 6),
)


@tool(permission="read")
def convert_number_base(number: str, from_base: int = 10) -> dict[str, Any]:
    """Show an integer in binary, octal, decimal and hexadecimal, from any base 2-36. Use it for
    'what is 255 in hex' or reading binary. For text bytes use text_to_hex.
    中文：进制转换、二进制、十六进制、八进制。

    Args:
        number: The integer as written in from_base; 0x/0b/0o prefixes are understood.
        from_base: The base the number is written in, 2-36.
    """
    text = number.strip().lower().replace("_", "")
    prefixes = {"0x": 16, "0b": 2, "0o": 8}
    if text[:2] in prefixes:
        from_base, text = prefixes[text[:2]], text[2:]
    try:
        value = int(text, from_base)
    except ValueError:
        raise ValueError(f"{number!r} is not a base-{from_base} integer") from None
    return {"decimal": value, "binary": bin(value), "octal": oct(value), "hex": hex(value)}


@tool(permission="read")
def format_json(text: str, indent: int = 2, sort_keys: bool = False) -> dict[str, Any]:
    """Validate JSON and pretty-print it with indentation and optionally sorted keys; an invalid
    document gets the line and column at fault. Use it to beautify or check JSON. To read one
    field use json_path_get.
    中文：JSON格式化、JSON校验、美化JSON、JSON报错。

    Args:
        text: The JSON document.
        indent: Spaces per level; 0 gives the compact one-line form.
        sort_keys: Sort object keys alphabetically.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        return {"valid": False, "error": error.msg, "line": error.lineno, "column": error.colno}
    if indent:
        pretty = json.dumps(data, indent=indent, sort_keys=sort_keys, ensure_ascii=False)
    else:
        pretty = json.dumps(data, separators=(",", ":"), sort_keys=sort_keys, ensure_ascii=False)
    return {"valid": True, "formatted": pretty}


@tool(permission="read")
def json_path_get(document: str, path: str) -> dict[str, Any]:
    """Read one value out of a JSON document by a dotted path like items.0.name. Use it to pick a
    field from an API response. To pretty-print the whole document use format_json.
    中文：JSON取值、按路径取字段、解析JSON。

    Args:
        document: The JSON text.
        path: Keys and list indexes separated by dots, e.g. data.users.2.email.
    """
    value: Any = json.loads(document)
    for part in [p for p in path.split(".") if p]:
        if isinstance(value, list) and part.lstrip("-").isdigit():
            value = value[int(part)]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            raise ValueError(f"the path stops at {part!r}")
    return {"value": value}


@tool(timeout=5, permission="read")
def regex_test(pattern: str, text: str, ignore_case: bool = False) -> dict[str, Any]:
    """Try a regular expression on a text: every match with its position and captured groups. Use
    it to test or debug a regex pattern. To just pull emails and links use
    extract_emails_and_links.
    中文：正则表达式测试、正则匹配、regex。

    Args:
        pattern: A Python regular expression.
        text: The text to search.
        ignore_case: Match without regard to case.
    """
    try:
        compiled = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as error:
        raise ValueError(f"invalid pattern: {error}") from None
    matches = [
        {"match": m.group(0), "start": m.start(), "groups": list(m.groups())}
        for m in list(compiled.finditer(text))[:100]
    ]
    return {"count": len(matches), "matches": matches}


def _semver(text: str) -> tuple[int, int, int, str]:
    match = _SEMVER.match(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a semantic version like 1.4.2 or 2.0.0-rc.1")
    return int(match[1]), int(match[2]), int(match[3]), match[4] or ""


def _pre_key(pre: str) -> tuple[Any, ...]:
    if not pre:
        return (1,)  # a release sorts after its pre-releases
    return (0, *[(0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split(".")])


@tool(permission="read")
def compare_versions(first: str, second: str) -> dict[str, Any]:
    """Compare two semantic version numbers by SemVer 2.0 rules, pre-releases included, and say
    which is newer. Use it for upgrade and dependency checks. For the next version use
    bump_version.
    中文：版本号比较、哪个版本新、语义化版本。

    Args:
        first: e.g. 1.10.0.
        second: e.g. 1.9.3 or 1.10.0-beta.2.
    """
    a, b = _semver(first), _semver(second)
    ka, kb = (a[:3], _pre_key(a[3])), (b[:3], _pre_key(b[3]))
    order = (ka > kb) - (ka < kb)
    return {"result": order, "newer": first if order > 0 else second if order < 0 else "equal"}


@tool(permission="read")
def bump_version(version: str, part: Literal["major", "minor", "patch"]) -> dict[str, Any]:
    """The next semantic version after a major, minor or patch release. Use it when cutting a
    release. To compare versions use compare_versions.
    中文：版本号升级、下一个版本、发版。

    Args:
        version: The current version, e.g. 2.3.9.
        part: Which part to increase.
    """
    major, minor, patch, _ = _semver(version)
    bumped = {
        "major": (major + 1, 0, 0),
        "minor": (major, minor + 1, 0),
        "patch": (major, minor, patch + 1),
    }[part]
    return {"version": ".".join(map(str, bumped))}


def _cron_field(text: str, low: int, high: int) -> set[int]:
    values: set[int] = set()
    for piece in text.split(","):
        body, _, step_text = piece.partition("/")
        step = int(step_text) if step_text else 1
        if body == "*":
            start, end = low, high
        elif "-" in body:
            start, end = (int(v) for v in body.split("-"))
        else:
            start = int(body)
            end = high if step_text else start
        if not (low <= start <= end <= high) or step < 1:
            raise ValueError(f"cron field {piece!r} is out of range {low}-{high}")
        values.update(range(start, end + 1, step))
    return values


@tool(permission="read")
def cron_next_runs(expression: str, after: str, count: int = 5) -> dict[str, Any]:
    """The next times a 5-field cron expression (minute hour day month weekday) fires after a
    moment, which also shows what a schedule means. Use it to check crontab or scheduled-job
    timing.
    中文：cron表达式、定时任务、下次执行时间、crontab。

    Args:
        expression: e.g. "*/15 9-17 * * 1-5".
        after: The moment to start from, YYYY-MM-DD HH:MM.
        count: How many run times to list (1-50).
    """
    fields = expression.split()
    if len(fields) != 5:
        raise ValueError("a cron expression has five fields: minute hour day month weekday")
    sets = [
        _cron_field(f.replace("7", "0") if name == "weekday" else f, low, high)
        for f, (name, low, high) in zip(fields, _CRON_FIELDS, strict=True)
    ]
    minutes, hours, days, months, weekdays = sets
    restricted_day, restricted_weekday = fields[2] != "*", fields[4] != "*"
    moment = datetime.fromisoformat(after.strip()).replace(second=0, microsecond=0)
    runs: list[str] = []
    for _ in range(600_000):  # about a year of minutes, at most
        moment += timedelta(minutes=1)
        if moment.month not in months or moment.hour not in hours or moment.minute not in minutes:
            continue
        day_ok, weekday_ok = moment.day in days, (moment.weekday() + 1) % 7 in weekdays
        # Cron's own rule: when both day fields are restricted, either one may match.
        fits = (
            (day_ok or weekday_ok)
            if restricted_day and restricted_weekday
            else day_ok and weekday_ok
        )
        if fits:
            runs.append(moment.strftime("%Y-%m-%d %H:%M"))
            if len(runs) >= min(max(count, 1), 50):
                break
    return {"runs": runs}


@tool(permission="read")
def explain_file_permissions(mode: str) -> dict[str, Any]:
    """Translate Unix file permissions between octal (755) and symbolic (rwxr-xr-x) and say who
    may read, write or execute. Use it for chmod questions.
    中文：文件权限、chmod、rwx、Linux权限。

    Args:
        mode: Octal such as 644 or 0750, or symbolic such as rw-r--r--.
    """
    text = mode.strip()
    if re.fullmatch(r"[0-7]{3,4}", text):
        value = int(text, 8)
    elif re.fullmatch(r"[r-][w-][xsS-][r-][w-][xsS-][r-][w-][xtT-]", text):
        value = sum(1 << (8 - i) for i, c in enumerate(text) if c not in "-ST")
    else:
        raise ValueError("give octal like 755 or symbolic like rwxr-xr-x")
    symbolic = stat.filemode(stat.S_IFREG | value)[1:]
    who = {}
    for name, shift in (("owner", 6), ("group", 3), ("others", 0)):
        bits = (value >> shift) & 7
        who[name] = [w for w, b in (("read", 4), ("write", 2), ("execute", 1)) if bits & b]
    return {"octal": f"{value & 0o7777:o}".zfill(3), "symbolic": symbolic, "permissions": who}


@tool(permission="read")
def human_readable_size(size_bytes: float, binary: bool = True) -> dict[str, Any]:
    """Write a byte count the way people read it, in binary (KiB, MiB) or decimal (KB, MB) units,
    e.g. 1536 -> 1.5 KiB. Use it for file and disk sizes. For transfer times use download_time.
    中文：文件大小换算、字节转MB、GB、存储容量。

    Args:
        size_bytes: The size in bytes.
        binary: Use 1024-based units (KiB, MiB); false for 1000-based (KB, MB).
    """
    base = 1024 if binary else 1000
    units = (
        ["B", "KiB", "MiB", "GiB", "TiB", "PiB"] if binary else ["B", "KB", "MB", "GB", "TB", "PB"]
    )
    value, unit = float(size_bytes), units[0]
    for unit in units:
        if abs(value) < base or unit == units[-1]:
            break
        value /= base
    return {"text": f"{value:.1f} {unit}" if unit != "B" else f"{int(value)} B"}


@tool(permission="read")
def inspect_uuid(value: str) -> dict[str, Any]:
    """Read a UUID: its version and variant, and the creation time of time-based (v1) UUIDs. Use
    it to identify or validate a UUID/GUID. To generate a name-based one use uuid_from_name.
    中文：UUID解析、GUID、UUID版本。

    Args:
        value: The UUID, with or without hyphens or braces.
    """
    try:
        found = uuid.UUID(value.strip().strip("{}"))
    except ValueError:
        raise ValueError(f"{value!r} is not a UUID") from None
    result: dict[str, Any] = {
        "canonical": str(found),
        "version": found.version,
        "variant": found.variant,
    }
    if found.version == 1:
        seconds = (found.time - 0x01B21DD213814000) / 1e7  # 100 ns ticks since 1582-10-15
        result["created"] = (datetime(1970, 1, 1) + timedelta(seconds=seconds)).isoformat() + "Z"
    return result


@tool(permission="read")
def csv_to_json(csv_text: str, delimiter: str = ",") -> dict[str, Any]:
    """Turn CSV text with a header row into a list of JSON objects, one per row. Use it to feed
    spreadsheet data to an API or code. For a Markdown table use csv_to_markdown.
    中文：CSV转JSON、表格转JSON、数据转换。

    Args:
        csv_text: The CSV, first line being the column names.
        delimiter: The field separator, e.g. "," or ";" or a tab.
    """
    rows = list(csv.DictReader(io.StringIO(csv_text.strip()), delimiter=delimiter))
    return {"rows": rows, "count": len(rows)}


@tool(permission="read")
def parse_env_file(text: str) -> dict[str, Any]:
    """Read the KEY=value lines of a .env file into a mapping, handling comments, export and
    quotes. Use it to check environment variable config. It does not read the real process
    environment.
    中文：env文件、环境变量、配置文件解析。

    Args:
        text: The contents of the .env file.
    """
    values: dict[str, str] = {}
    problems = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        line = line.removeprefix("export ").strip()
        key, sep, value = line.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key.strip()):
            problems.append(f"line {number}: not KEY=value")
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        else:
            value = value.split(" #", 1)[0].rstrip()
        values[key.strip()] = value
    return {"variables": values, "problems": problems}


@tool(permission="read")
def snowflake_id_time(snowflake: int, epoch_ms: int = 1288834974657) -> dict[str, Any]:
    """When a Snowflake ID (Twitter/X, Discord) was created, with its worker and sequence parts.
    Use it to date a tweet, message or user ID.
    中文：雪花ID、Snowflake、ID生成时间。

    Args:
        snowflake: The 64-bit ID.
        epoch_ms: The service's epoch in Unix milliseconds (Twitter's by default; Discord
            uses 1420070400000).
    """
    millis = (snowflake >> 22) + epoch_ms
    created = datetime(1970, 1, 1) + timedelta(milliseconds=millis)
    return {
        "created_utc": created.isoformat(timespec="milliseconds") + "Z",
        "worker": (snowflake >> 12) & 0x3FF,
        "sequence": snowflake & 0xFFF,
    }


@tool(permission="read")
def password_strength(password: str) -> dict[str, Any]:
    """Estimate how strong a password is: entropy bits, a rating (weak to strong) and common
    weaknesses. Use it for 'is this password secure'. It does not generate passwords or check
    breach lists.
    中文：密码强度、密码安全、弱密码、密码复杂度。

    Args:
        password: The password to assess (it is not stored or sent anywhere).
    """
    pools = [(r"[a-z]", 26), (r"[A-Z]", 26), (r"[0-9]", 10), (r"[^A-Za-z0-9]", 33)]
    pool = sum(size for pattern, size in pools if re.search(pattern, password))
    bits = len(password) * math.log2(pool) if pool else 0.0
    weaknesses = []
    if len(password) < 12:
        weaknesses.append("shorter than 12 characters")
    if re.search(r"(.)\1\1", password):
        weaknesses.append("a character repeated three times")
    if re.search(r"(?i)password|qwerty|123456|admin|letmein", password):
        weaknesses.append("contains a very common password")
    rating = "weak" if bits < 50 or weaknesses else "strong" if bits >= 80 else "fair"
    return {"entropy_bits": round(bits, 1), "rating": rating, "weaknesses": weaknesses}
