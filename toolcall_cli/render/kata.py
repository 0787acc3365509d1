"""`toolcall kata check`'s report: the score by category and source, the first failure of each
category (expected against got), and one line on the whole. What the user's code returned is
shown as text, never read as rich markup."""

from __future__ import annotations

from datetime import datetime, timedelta

from rich.console import Console
from rich.table import Table
from rich.text import Text

from toolcall_cli.kata import SOURCES, CaseResult, CheckRun, Header, duration
from toolcall_cli.render.verbatim import verbatim

PASS, FAIL = "✓", "✗"


def print_check(check: CheckRun, header: Header | None, now: datetime, console: Console) -> None:
    console.print(title(check, header, now))
    console.print(Text(f"real outputs: {check.conformance}", style="dim"))
    console.print(Text(check.coverage, style="dim"))
    for line in check.sandbox:
        console.print(Text(line, style="dim"))
    if check.cases and any(c.outcome != "not run" for c in check.cases):
        console.print(score_table(check.cases))
        print_failures(check.cases, console)
    if check.problem:
        console.print(Text(check.problem, style="bold red"))
    if check.output:
        console.print(Text("what the code printed last:", style="dim"))
        console.print(Text(check.output, style=verbatim("dim")))
    console.print(verdict(check))


def title(check: CheckRun, header: Header | None, now: datetime) -> Text:
    text = Text.assemble((f"kata {check.kata.name}", "bold"), f"  {check.file}")
    started = header.started if header and header.kata == check.kata else None
    if started is not None:
        text.append(
            f"  · {elapsed(now - started.astimezone(now.tzinfo))} since `toolcall kata new`",
            style="dim",
        )
    return text


def elapsed(delta: timedelta) -> str:
    """The time since the starter was written: a clock set back reads as none."""
    return duration(max(delta.total_seconds(), 0.0))


def categories(cases: list[CaseResult]) -> list[str]:
    return list(dict.fromkeys(c.category for c in cases))


def cell(cases: list[CaseResult]) -> Text:
    if not cases:
        return Text("-", style="dim")
    passed = sum(c.outcome == "pass" for c in cases)
    good = passed == len(cases)
    return Text(f"{PASS if good else FAIL} {passed}/{len(cases)}", style="green" if good else "red")


def score_table(cases: list[CaseResult]) -> Table:
    """Cases passed of those run, by category and source (a stopped check ran fewer)."""
    cases = [c for c in cases if c.outcome != "not run"]
    table = Table(box=None, pad_edge=False, header_style="bold")
    table.add_column("category")
    for source in (*SOURCES, "total"):
        table.add_column(source, justify="right")
    for category in categories(cases):
        mine = [c for c in cases if c.category == category]
        row = [cell([c for c in mine if c.source == source]) for source in SOURCES]
        table.add_row(Text(category), *row, cell(mine))
    return table


def print_failures(cases: list[CaseResult], console: Console) -> None:
    failed = [c for c in cases if c.outcome not in ("pass", "not run")]
    if not failed:
        return
    console.print()
    console.print(Text("the first failure of each category:", style="bold"))
    seen: set[str] = set()
    for category in categories(failed):
        first = next(c for c in failed if c.category == category)
        line = Text.assemble((f"{FAIL} {category}", "red"), f" · {first.source} · {first.name}")
        if first.outcome != "fail" and first.got in seen:  # the same exception all over
            console.print(line.append(": the same as above", style="dim"))
            continue
        seen.add(first.got)
        console.print(line)
        if first.given:
            console.print(Text(f"    input     {first.given}"))
        console.print(Text(f"    expected  {first.expected}"))
        console.print(Text(f"    got       {first.got}"))


def verdict(check: CheckRun) -> Text:
    total = len(check.cases)
    passed = sum(c.outcome == "pass" for c in check.cases)
    if check.passed:
        return Text(f"{PASS} all {total} cases pass", style="bold green")
    unrun = sum(c.outcome == "not run" for c in check.cases)
    if unrun == total:
        return Text(f"{FAIL} no case ran", style="bold red")
    not_run = f" ({unrun} not run)" if unrun else ""
    return Text(f"{FAIL} {passed} of {total} cases pass{not_run}", style="bold red")
