"""What an eval found: a row per model and strategy (right, wrong by kind, no answer, mean
iterations, tokens and wall time), a grid of every case's marks, and the same as JSON."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from rich import box
from rich.table import Table
from rich.text import Text

from toolcall_cli.evaluate._verdict import WRONG_KINDS
from toolcall_cli.evaluate.cases import Case
from toolcall_cli.evaluate.runner import EvalRun

MARKS = {"right": "✓", "wrong": "✗", "no answer": "·", "not graded": "-"}
MARKS_MEAN = "✓ right, ✗ wrong, · no answer, - not graded; one mark per seed"


@dataclass(frozen=True)
class Row:
    """One model under one strategy, over every case and seed."""

    model: str
    strategy: str
    runs: int
    right: int
    wrong: Counter[str]
    """By kind (WRONG_KINDS)."""
    no_answer: int
    ended_0_non_answer: int
    not_graded: int
    mean_iterations: float
    mean_tokens: float
    tokens_estimated: bool
    mean_wall_time: float

    @property
    def graded(self) -> int:
        return self.runs - self.not_graded

    @property
    def score(self) -> float:
        """Right of graded runs (0 when none was graded)."""
        return self.right / self.graded if self.graded else 0.0

    def record(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "strategy": self.strategy,
            "runs": self.runs,
            "right": self.right,
            "wrong": sum(self.wrong.values()),
            "wrong_by_kind": {kind: self.wrong[kind] for kind in WRONG_KINDS},
            "no_answer": self.no_answer,
            "ended_0_non_answer": self.ended_0_non_answer,
            "not_graded": self.not_graded,
            "score": round(self.score, 4),
            "mean_iterations": round(self.mean_iterations, 3),
            "mean_tokens": round(self.mean_tokens, 1),
            "tokens_estimated": self.tokens_estimated,
            "mean_wall_time": round(self.mean_wall_time, 3),
        }


def _mean(values: Sequence[float]) -> float:
    return fmean(values) if values else 0.0


def row_of(model: str, strategy: str, runs: Sequence[EvalRun]) -> Row:
    outcomes = Counter(run.verdict.outcome for run in runs)
    wrong = Counter(
        run.verdict.kind or "wrong answer" for run in runs if run.verdict.outcome == "wrong"
    )
    return Row(
        model=model,
        strategy=strategy,
        runs=len(runs),
        right=outcomes["right"],
        wrong=wrong,
        no_answer=outcomes["no answer"],
        ended_0_non_answer=sum(run.verdict.ended_0_non_answer for run in runs),
        not_graded=outcomes["not graded"],
        mean_iterations=_mean([float(run.figures.get("iterations") or 0) for run in runs]),
        mean_tokens=_mean([float(run.figures.get("tokens") or 0) for run in runs]),
        tokens_estimated=any(run.figures.get("tokens_estimated") for run in runs),
        mean_wall_time=_mean([float(run.figures.get("wall_time") or 0) for run in runs]),
    )


def rows(runs: Sequence[EvalRun]) -> list[Row]:
    """A row per model and strategy, in the order they were first run."""
    groups: dict[tuple[str, str], list[EvalRun]] = {}
    for run in runs:
        groups.setdefault((run.key.model, run.key.strategy), []).append(run)
    return [row_of(model, strategy, mine) for (model, strategy), mine in groups.items()]


def overall_score(runs: Sequence[EvalRun]) -> float:
    """Right of every graded run, all models and strategies together (what --fail-under reads)."""
    graded = [run for run in runs if run.verdict.outcome != "not graded"]
    return sum(run.verdict.outcome == "right" for run in graded) / len(graded) if graded else 0.0


# --- the terminal -------------------------------------------------------------------------------


def wrong_cell(row: Row) -> str:
    if not row.wrong:
        return "0"
    kinds = ", ".join(f"{kind} {row.wrong[kind]}" for kind in WRONG_KINDS if row.wrong[kind])
    return f"{sum(row.wrong.values())} ({kinds})"


def _table(title: str) -> Table:
    return Table(
        title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False
    )


def summary_table(table_rows: Sequence[Row], title: str) -> Table:
    table = _table(title)
    table.add_column("model", style="bold cyan", no_wrap=True)
    table.add_column("strategy", style="cyan", no_wrap=True)
    for name in ("right", "score"):
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("wrong (which way)")
    for name in ("no\nanswer", "mean\niter", "mean\ntokens", "mean\nwall"):
        table.add_column(name, justify="right", no_wrap=True)
    for row in table_rows:
        no_answer = str(row.no_answer)
        if row.ended_0_non_answer:
            no_answer += f" ({row.ended_0_non_answer} ended 0)"
        table.add_row(
            row.model,
            row.strategy,
            f"{row.right}/{row.graded}",
            f"{row.score:.0%}",
            wrong_cell(row),
            no_answer,
            f"{row.mean_iterations:.1f}",
            f"{'~' if row.tokens_estimated else ''}{row.mean_tokens:,.0f}",
            f"{row.mean_wall_time:.2f}s",
        )
    return table


def columns(runs: Sequence[EvalRun]) -> list[tuple[str, str]]:
    return list(dict.fromkeys((run.key.model, run.key.strategy) for run in runs))


def grid(cases: Sequence[Case], runs: Sequence[EvalRun]) -> list[tuple[Case, list[str]]]:
    """Each case that ran, with its marks (seed by seed) in each of the `columns`."""
    marks: dict[tuple[str, str, str], str] = {}
    for run in sorted(runs, key=lambda r: r.key.seed):
        where = (run.key.case, run.key.model, run.key.strategy)
        marks[where] = marks.get(where, "") + MARKS[run.verdict.outcome]
    shown = columns(runs)
    cells = [(case, [marks.get((case.id, *column), "") for column in shown]) for case in cases]
    return [(case, row) for case, row in cells if any(row)]


def grid_table(cases: Sequence[Case], runs: Sequence[EvalRun]) -> Table:
    """A row per case, a column per model and strategy."""
    table = _table(f"Per case ({MARKS_MEAN})")
    table.add_column("case", style="bold", no_wrap=True)
    table.add_column("category", style="dim", no_wrap=True)
    shown = columns(runs)
    several_models = len({model for model, _ in shown}) > 1
    for model, strategy in shown:
        table.add_column(f"{model}\n{strategy}" if several_models else strategy, justify="center")
    for case, cells in grid(cases, runs):
        table.add_row(case.id, case.category, *(colored(cell) for cell in cells))
    return table


def colored(marks: str) -> Text:
    style = "green" if set(marks) == {"✓"} else "red" if "✗" in marks or "·" in marks else ""
    return Text(marks, style=style)


def failures(runs: Sequence[EvalRun]) -> list[EvalRun]:
    return [run for run in runs if run.verdict.outcome in ("wrong", "no answer")]


def failure_line(run: EvalRun) -> Text:
    """`case · model · strategy · seed: wrong (wrong argument): detail  trace PATH`."""
    key, verdict = run.key, run.verdict
    kind = f" ({verdict.kind})" if verdict.kind else ""
    detail = f": {verdict.detail}" if verdict.detail else ""
    return Text.assemble(
        (f"{key.case}", "bold"),
        f" · {key.model} · {key.strategy} · seed {key.seed}: ",
        (f"{verdict.outcome}{kind}", "red"),
        detail,
        (f"  trace {run.trace}" if run.trace else "", "dim"),
    )


# --- JSON ---------------------------------------------------------------------------------------


def eval_record(
    cases: Sequence[Case], runs: Sequence[EvalRun], meta: dict[str, Any]
) -> dict[str, Any]:
    """`eval --json`: the rows, the overall score, and every run."""
    return {
        **meta,
        "cases": len(cases),
        "score": round(overall_score(runs), 4),
        "rows": [row.record() for row in rows(runs)],
        "runs": [run.record() for run in runs],
    }
