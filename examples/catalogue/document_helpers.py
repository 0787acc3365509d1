"""Document helpers that work on text given in the call (no files): tables, outlines, citations,
templates, redaction, ISBNs."""

from __future__ import annotations

import csv
import io
import re
import string
from typing import Any, Literal

from toolcall_cli import tool


def _cell(value: object) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


@tool(permission="read")
def markdown_table(
    headers: list[str], rows: list[list[str]], align: list[str] | None = None
) -> dict[str, Any]:
    """Build a Markdown table from column headers and rows, with optional left, centre or right
    alignment. Use it for READMEs, docs and chat replies. If the data is already CSV use
    csv_to_markdown.
    中文：生成Markdown表格、表格、Markdown。

    Args:
        headers: The column names.
        rows: The rows, each a list of cell texts.
        align: Per column: left, center or right.
    """
    marks = {"left": ":---", "center": ":---:", "right": "---:"}
    rule = [
        marks.get((align or [])[i] if i < len(align or []) else "left", ":---")
        for i in range(len(headers))
    ]
    lines = ["| " + " | ".join(_cell(h) for h in headers) + " |", "| " + " | ".join(rule) + " |"]
    for row in rows:
        padded = [*row, *[""] * (len(headers) - len(row))][: len(headers)]
        lines.append("| " + " | ".join(_cell(c) for c in padded) + " |")
    return {"markdown": "\n".join(lines)}


@tool(permission="read")
def csv_to_markdown(csv_text: str) -> dict[str, Any]:
    """Turn CSV text (first row = headers) into a Markdown table for a README, wiki or chat
    message. Use it to paste spreadsheet data as a table. For JSON output use csv_to_json.
    中文：CSV转Markdown表格、Excel转表格、表格转换。

    Args:
        csv_text: The CSV content.
    """
    rows = list(csv.reader(io.StringIO(csv_text.strip())))
    if not rows:
        raise ValueError("the CSV is empty")
    return markdown_table(rows[0], rows[1:])


@tool(permission="read")
def csv_column_summary(csv_text: str, column: str) -> dict[str, Any]:
    """Total, average, minimum and maximum of a numeric column of CSV data, like a spreadsheet
    SUM or AVERAGE. Use it to add up a column of amounts. For a plain list of numbers use
    describe_numbers.
    中文：CSV求和、列求和、表格求平均、汇总。

    Args:
        csv_text: The CSV content with a header row.
        column: The header of the column to sum.
    """
    reader = csv.DictReader(io.StringIO(csv_text.strip()))
    if column not in (reader.fieldnames or []):
        raise ValueError(f"no column {column!r}; columns: {', '.join(reader.fieldnames or [])}")
    numbers, skipped = [], 0
    for row in reader:
        cell = (row.get(column) or "").replace(",", "").replace("$", "").replace("¥", "").strip()
        try:
            numbers.append(float(cell))
        except ValueError:
            skipped += 1
    if not numbers:
        raise ValueError("the column has no numbers")
    return {
        "total": round(sum(numbers), 6),
        "average": round(sum(numbers) / len(numbers), 6),
        "min": min(numbers),
        "max": max(numbers),
        "count": len(numbers),
        "skipped_cells": skipped,
    }


@tool(permission="read")
def markdown_table_of_contents(markdown: str, max_level: int = 3) -> dict[str, Any]:
    """A linked table of contents from the # headings of a Markdown document, with GitHub-style
    anchors. Use it for READMEs and long docs.
    中文：Markdown目录、生成目录、标题目录。

    Args:
        markdown: The Markdown text.
        max_level: The deepest heading level to include (1-6).
    """
    lines, in_code = [], False
    seen: dict[str, int] = {}
    for raw in markdown.splitlines():
        if raw.strip().startswith("```"):
            in_code = not in_code
        match = None if in_code else re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", raw)
        if match and len(match.group(1)) <= max_level:
            title = match.group(2)
            anchor = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
            count = seen.get(anchor, 0)
            seen[anchor] = count + 1
            suffix = f"-{count}" if count else ""
            lines.append(f"{'  ' * (len(match.group(1)) - 1)}- [{title}](#{anchor}{suffix})")
    return {"toc": "\n".join(lines), "headings": len(lines)}


@tool(permission="read")
def format_citation(
    authors: list[str],
    year: int,
    title: str,
    publisher_or_journal: str,
    style: Literal["apa", "mla", "chicago"] = "apa",
) -> dict[str, Any]:
    """Format a reference for a bibliography or reference list in APA, MLA or Chicago style from
    authors, year, title and publisher or journal. Use it for essays, theses and papers.
    中文：参考文献格式、引用格式、APA格式、论文引用。

    Args:
        authors: Author names as "Last, First", in order.
        year: The publication year.
        title: The title of the work.
        publisher_or_journal: The publisher (books) or journal name.
        style: apa, mla or chicago.
    """

    def initials(name: str) -> str:
        last, _, first = name.partition(",")
        return (
            f"{last.strip()}, " + " ".join(f"{p[0]}." for p in first.split())
            if first
            else last.strip()
        )

    if not authors:
        raise ValueError("give at least one author")
    if style == "apa":
        names = [initials(a) for a in authors]
        joined = names[0] if len(names) == 1 else ", ".join(names[:-1]) + ", & " + names[-1]
        text = f"{joined} ({year}). {title}. {publisher_or_journal}."
    elif style == "mla":
        first = authors[0]
        joined = (
            first
            if len(authors) == 1
            else f"{first}, and {authors[1]}"
            if len(authors) == 2
            else f"{first}, et al"
        )
        text = f"{joined}. {title}. {publisher_or_journal}, {year}."
    else:
        joined = (
            authors[0] if len(authors) == 1 else ", ".join(authors[:-1]) + ", and " + authors[-1]
        )
        text = f"{joined}. {year}. {title}. {publisher_or_journal}."
    return {"citation": text}


@tool(permission="read")
def fill_template(template: str, values: dict[str, str]) -> dict[str, Any]:
    """Fill the $name or ${name} placeholders of a letter, email or message template with values
    (mail merge). Use it to personalise form letters and notices.
    中文：模板填充、邮件合并、占位符替换、套用模板。

    Args:
        template: The template text, e.g. "Dear $name, your order ${order} has shipped."
        values: The value for each placeholder.
    """
    filled = string.Template(template)
    names = {m.group("named") or m.group("braced") for m in filled.pattern.finditer(template)} - {
        None
    }
    missing = sorted(n for n in names if n not in values)
    return {"text": filled.safe_substitute(values), "missing": missing}


_REDACTIONS = (
    ("email", re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")),
    ("card", re.compile(r"\b(?:\d[ -]?){13,19}\b")),
    ("china_id", re.compile(r"\b\d{17}[\dXx]\b")),
    (
        "phone",
        re.compile(
            r"(?<!\d)(?:\+?\d{1,3}[ -]?)?(?:1[3-9]\d{9}|\(?\d{3}\)?[ -]?\d{3}[ -]?\d{4})(?!\d)"
        ),
    ),
)


@tool(permission="read")
def redact_personal_data(text: str) -> dict[str, Any]:
    """Mask email addresses, phone numbers, card numbers and Chinese ID numbers in text before
    sharing it, to protect privacy. Use it to anonymise logs, tickets and documents. To extract
    emails instead use extract_emails_and_links.
    中文：个人信息脱敏、隐私打码、隐藏手机号、数据脱敏。

    Args:
        text: The text to clean.
    """
    counts: dict[str, int] = {}
    for label, pattern in _REDACTIONS:
        text, n = pattern.subn(f"[{label.upper()}]", text)
        counts[label] = n
    return {"text": text, "redacted": counts}


@tool(permission="read")
def isbn_check(isbn: str) -> dict[str, Any]:
    """Validate an ISBN-10 or ISBN-13 book number and give both forms. Use it to check or convert
    a book's ISBN. For product barcodes use barcode_check_digit.
    中文：ISBN校验、书号、图书编号、ISBN转换。

    Args:
        isbn: The ISBN, hyphens and spaces allowed.
    """
    digits = re.sub(r"[\s-]", "", isbn).upper()
    if re.fullmatch(r"\d{9}[\dX]", digits):
        total = sum((10 - i) * (10 if c == "X" else int(c)) for i, c in enumerate(digits))
        valid = total % 11 == 0
        core = "978" + digits[:9]
    elif re.fullmatch(r"\d{13}", digits):
        valid = sum(int(c) * (1 if i % 2 == 0 else 3) for i, c in enumerate(digits)) % 10 == 0
        core = digits[:12]
    else:
        return {"valid": False, "reason": "an ISBN has 10 or 13 digits"}
    check13 = (10 - sum(int(c) * (1 if i % 2 == 0 else 3) for i, c in enumerate(core)) % 10) % 10
    result: dict[str, Any] = {"valid": valid, "isbn13": core + str(check13)}
    if core.startswith("978"):
        nine = core[3:]
        check10 = (11 - sum((10 - i) * int(c) for i, c in enumerate(nine)) % 11) % 11
        result["isbn10"] = nine + ("X" if check10 == 10 else str(check10))
    return result


@tool(permission="read")
def page_count_estimate(words: int, words_per_page: int = 500) -> dict[str, Any]:
    """How many printed pages a manuscript of a given word count fills, single and double spaced.
    Use it for 'how many pages is 5000 words'. For reading time use reading_time.
    中文：页数估算、多少页、字数换页数、论文页数。

    Args:
        words: The word count.
        words_per_page: Words per single-spaced page (about 500 at 12 pt).
    """
    single = words / words_per_page
    return {"single_spaced_pages": round(single, 1), "double_spaced_pages": round(single * 2, 1)}


@tool(permission="read")
def number_outline(lines: list[str]) -> dict[str, Any]:
    """Number an indented outline as 1, 1.1, 1.2, 2... (two spaces or a tab per level). Use it
    for document structure, agendas and table of contents drafts.
    中文：大纲编号、多级编号、提纲、标题编号。

    Args:
        lines: The outline lines, indented to show their level.
    """
    counters: list[int] = []
    out = []
    for line in lines:
        if not line.strip():
            continue
        expanded = line.replace("\t", "  ")
        level = (len(expanded) - len(expanded.lstrip())) // 2
        counters = counters[: level + 1]
        while len(counters) <= level:
            # A level jumped over (an indent of two steps) counts as its first item, not 0.
            counters.append(0 if len(counters) == level else 1)
        counters[level] += 1
        out.append(f"{'  ' * level}{'.'.join(str(c) for c in counters)} {line.strip()}")
    return {"outline": "\n".join(out)}
