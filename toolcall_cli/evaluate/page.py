"""`eval --html`: one self-contained page (no script, no file or font from elsewhere) with the
table, the per-case grid, and each failing run drawn from its trace as `trace show --html`
draws it."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

from toolcall_cli.evaluate.cases import Case
from toolcall_cli.evaluate.report import (
    MARKS_MEAN,
    columns,
    failures,
    grid,
    overall_score,
    rows,
    wrong_cell,
)
from toolcall_cli.evaluate.runner import EvalRun

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em; color: #1d1d1f; background: #fff; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #ddd; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
td.marks { text-align: center; font-family: ui-monospace, monospace; }
.right { color: #137333; } .wrong { color: #b3261e; } .dim { color: #666; }
details { margin: 0.6em 0; border: 1px solid #ddd; border-radius: 4px; padding: 0.4em 0.8em; }
summary { cursor: pointer; }
pre.view { font: 12px/1.3 ui-monospace, monospace; overflow-x: auto; padding: 0.6em; }
"""

VIEW_FORMAT = (
    '<pre class="view" style="color: {foreground}; background-color: {background}">'
    "<code>{code}</code></pre>"
)


def e(text: object) -> str:
    return html.escape(str(text), quote=True)


def summary_html(runs: Sequence[EvalRun]) -> str:
    head = (
        "<tr><th>model</th><th>strategy</th><th>right</th><th>score</th>"
        "<th>wrong (which way)</th><th>no answer</th><th>ended 0 with a non-answer</th>"
        "<th>mean iterations</th><th>mean tokens</th><th>mean wall time</th></tr>"
    )
    body = "".join(
        f"<tr><td>{e(row.model)}</td><td>{e(row.strategy)}</td>"
        f'<td class="n">{row.right}/{row.graded}</td><td class="n">{row.score:.0%}</td>'
        f'<td>{e(wrong_cell(row))}</td><td class="n">{row.no_answer}</td>'
        f'<td class="n">{row.ended_0_non_answer}</td>'
        f'<td class="n">{row.mean_iterations:.1f}</td><td class="n">{row.mean_tokens:,.0f}</td>'
        f'<td class="n">{row.mean_wall_time:.2f}s</td></tr>'
        for row in rows(runs)
    )
    return f'<table id="summary">{head}{body}</table>'


def grid_html(cases: Sequence[Case], runs: Sequence[EvalRun]) -> str:
    shown = columns(runs)
    head = "<tr><th>case</th><th>category</th>" + "".join(
        f"<th>{e(model)}<br>{e(strategy)}</th>" for model, strategy in shown
    )
    body = []
    for case, cells in grid(cases, runs):
        tds = "".join(
            f'<td class="marks {"right" if set(c) == {"✓"} else "wrong"}">{e(c)}</td>'
            for c in cells
        )
        name = f'<td title="{e(case.question)}">{e(case.id)}</td><td>{e(case.category)}</td>'
        body.append(f"<tr>{name}{tds}</tr>")
    return f'<table id="grid">{head}</tr>{"".join(body)}</table>'


def drawn(trace: str | None) -> str:
    """A run's trace drawn as `trace show --html` draws it; a line saying why when it cannot."""
    if trace is None:
        return '<p class="dim">(no trace)</p>'
    from toolcall_cli.render.recorded import recording_console, show_live
    from toolcall_cli.trace import TraceError, read_trace
    from toolcall_cli.trace.records import replayed_events

    try:
        recorded = read_trace(Path(trace))
        events = list(replayed_events(recorded))
    except TraceError as error:
        return f'<p class="dim">{e(error)}</p>'
    console = recording_console()
    show_live(recorded, events, console)
    return console.export_html(inline_styles=True, code_format=VIEW_FORMAT)


def failure_html(run: EvalRun) -> str:
    key, verdict = run.key, run.verdict
    kind = f" ({verdict.kind})" if verdict.kind else ""
    detail = f": {verdict.detail}" if verdict.detail else ""
    summary = (
        f"<b>{e(key.case)}</b> · {e(key.model)} · {e(key.strategy)} · seed {key.seed}: "
        f'<span class="wrong">{e(verdict.outcome + kind)}</span>{e(detail)}'
    )
    where = f'<p class="dim">trace {e(run.trace)}</p>' if run.trace else ""
    return f"<details><summary>{summary}</summary>{where}{drawn(run.trace)}</details>"


def eval_page(cases: Sequence[Case], runs: Sequence[EvalRun], calls_only: bool) -> str:
    failed = failures(runs)
    mode = " (--calls-only: the first reply's calls)" if calls_only else ""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>toolcall eval: {overall_score(runs):.0%} right</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>toolcall eval: {len(cases)} cases{e(mode)}</h1>",
        f"<p>right: <b>{overall_score(runs):.1%}</b> of graded runs</p>",
        summary_html(runs),
        f'<h2>Per case</h2><p class="dim">{e(MARKS_MEAN)}</p>',
        grid_html(cases, runs),
        f"<h2>Failing runs ({len(failed)})</h2>",
        *(failure_html(run) for run in failed),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"
