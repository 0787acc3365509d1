"""`toolcall doctor`'s report: each run's checklist as ✓ / ✗ lines, its findings, the most
likely cause and the fix to try first. Trace text is never read as rich markup."""

from __future__ import annotations

import json

from rich.console import Console
from rich.text import Text

from toolcall_cli.doctor import Advice, Diagnosis, Finding, RunDiagnosis, Step
from toolcall_cli.wording import plural

PASS, PROBLEM, NOTE = "✓", "✗", "·"


def print_diagnosis(diagnosis: Diagnosis, console: Console) -> None:
    runs = plural(len(diagnosis.runs), "run")
    heading = f"  {diagnosis.path}  (trace format v{diagnosis.version}, {runs})"
    console.print(Text.assemble(("toolcall doctor", "bold"), heading))
    for note in diagnosis.notes:
        console.print(Text(f"note: {note}", style="yellow"))
    for run in diagnosis.runs:
        console.print()
        print_run(run, console)
    console.print()
    console.print(verdict(diagnosis))


def print_run(run: RunDiagnosis, console: Console) -> None:
    ending = run.stop_reason or "did not finish"
    how = (run.model, run.strategy_label, plural(run.iterations, "iteration"), ending)
    console.print(
        Text.assemble(
            (f"Run {run.number}", "bold"),
            f"  {json.dumps(run.question, ensure_ascii=False)}  ",
            (" · ".join(how), "dim"),
        )
    )
    for step in run.steps:
        print_step(step, console)
    if run.advice is not None:
        print_advice(run.advice, console)


def print_step(step: Step, console: Console) -> None:
    mark, style = (PASS, "green") if step.status == "pass" else (PROBLEM, "red")
    line = Text(f"  {mark} ", style=style)
    line.append(f"{step.number}. {step.question}", style="bold")
    console.print(line)
    console.print(Text(f"       {step.summary}"))
    for finding in step.findings:
        console.print(finding_text(finding))


def finding_text(finding: Finding) -> Text:
    mark, style = (NOTE, "dim") if finding.note else (PROBLEM, "red")
    text = Text(f"       {mark} ", style=style)
    text.append(where(finding), style="cyan")
    text.append(finding.message)
    if finding.recovered:
        text.append(f"\n         → {finding.recovered}", style="green")
    elif finding.fixable:
        text.append("\n         → not put right", style="yellow")
    return text


def where(finding: Finding) -> str:
    """`iteration 2, event 13 (tool_finished): `, or what of it is known."""
    parts = []
    if finding.iteration is not None:
        parts.append(f"iteration {finding.iteration}")
    if finding.event is not None:
        parts.append(f"event {finding.event} ({finding.event_kind})")
    return f"{', '.join(parts)}: " if parts else ""


def print_advice(advice: Advice, console: Console) -> None:
    at = where(advice.finding).removesuffix(": ")
    console.print(
        Text.assemble(
            ("  Most likely cause: ", "bold"), advice.cause, (f" — {at}" if at else "", "dim")
        )
    )
    kind = "" if advice.fix_kind == "none" else f" ({advice.fix_kind})"
    console.print(Text.assemble((f"  Fix to try first{kind}: ", "bold"), advice.fix))


def verdict(diagnosis: Diagnosis) -> Text:
    count = diagnosis.problem_count
    if not count:
        stopped = sum(1 for run in diagnosis.runs if run.stop_reason == "interrupted")
        short = f", as far as {plural(stopped, 'interrupted run')} got" if stopped else ""
        return Text(f"{PASS} every step passed{short}", style="green")
    bad = sum(1 for run in diagnosis.runs if run.problems)
    runs = plural(len(diagnosis.runs), "run")
    return Text(f"{PROBLEM} {plural(count, 'problem')} found in {bad} of {runs}", style="red")
