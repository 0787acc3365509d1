"""Right answers from a real model: toolcall beside agent frameworks, graded by the tools.

    python bench/realmodel_eval.py --base-url http://127.0.0.1:8181/v1      # the full run
    python bench/realmodel_eval.py --questions c-mul-add,w-beijing-now --systems regex --passes 1

Runs only when a server is given (--base-url or TOOLCALL_BENCH_BASE_URL); otherwise it says it
skipped and exits 0. bench/eval/questions.json is written as a `toolcall eval` case file (each
expected answer computed by calling the tools the model is given, so no number here can drift
from the tools). toolcall's systems run through `toolcall eval` on that file (one eval per pass
and group of flags, in its own folder beside the records, each run traced there); the peers
(each in bench/.venv-peers) are fed the same cases and graded by the same grader, toolcall
eval's (toolcall_cli/evaluate/_grading.py). Every run is appended to a JSONL record file as it
ends (so an interrupted run resumes with --resume, and the evals with theirs), and the report
is written from those records.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import dataclasses
import datetime
import functools
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolcall_cli.evaluate._grading import (  # the one grader: toolcall eval's  # noqa: F401
    ExpectedAnswer,
    figures_in,
    invented,
    non_answer_kind,
    numbers_in,
    times_in,
)
from toolcall_cli.evaluate.cases import case_from
from toolcall_cli.evaluate.cases import expected_answer as eval_expected_answer
from toolcall_cli.evaluate.runner import fixed_now as eval_fixed_now

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
EVAL = BENCH / "eval"
BENCH_TOOLS = EVAL / "tools.d"
PEERS_VENV = BENCH / ".venv-peers"
DEFAULT_RECORDS = BENCH / "results" / "realmodel_runs.jsonl"
DEFAULT_REPORT = BENCH / "results" / "realmodel_30questions.md"
DEFAULT_SEEDS = (11, 22)
NOW_VARIABLE = "TOOLCALL_NOW"  # get_time's fixed instant (tools.d/clock.py)
PEER_MAX_STEPS = 5
"""Every peer's step cap: at most this many model calls, as toolcall's default iteration limit."""
SMOLAGENTS_MAX_STEPS = PEER_MAX_STEPS


@dataclass(frozen=True)
class Peer:
    """A framework beside toolcall: its runner in bench/eval (run in bench/.venv-peers)."""

    runner: str
    label: str
    temperature: float | None = None
    """None: the server's sampling (only the seed and max_tokens are sent)."""


_PEER_KINDS = {
    "smolagents": ("smolagents_runner.py", "smolagents ToolCallingAgent (max_steps {n})"),
    "pydanticai": ("pydanticai_runner.py", "pydantic-ai Agent (request_limit {n})"),
    "openai-agents": ("openai_agents_runner.py", "OpenAI Agents SDK (max_turns {n})"),
    "langgraph": ("langgraph_runner.py", "LangGraph create_react_agent ({n} model calls)"),
}
PEERS: dict[str, Peer] = {}
for _name, (_runner, _label) in _PEER_KINDS.items():
    _shown = _label.format(n=PEER_MAX_STEPS)
    PEERS[_name] = Peer(_runner, f"{_shown}, server's temperature")
    PEERS[f"{_name}-t0"] = Peer(_runner, f"{_shown}, temperature 0", temperature=0.0)
PEER_PACKAGES = ("smolagents", "openai", "pydantic-ai-slim[openai]", "openai-agents", "langgraph",
                 "langchain-openai")  # fmt: skip

# system name -> the toolcall flags that select it (None: a peer, in PEERS)
SYSTEMS: dict[str, tuple[str, ...] | None] = {
    "default": (),  # no strategy flag: what `toolcall run --base-url URL` picks for the server
    "regex": ("--strategy", "regex"),
    "schema": ("--strategy", "schema"),
    "schema-json": ("--strategy", "schema", "--schema-mode", "json"),
    "stream": ("--strategy", "stream"),
    "stream-native": ("--strategy", "stream", "--stream-mode", "native"),
    "schema-required": ("--strategy", "schema", "--schema-mode", "required"),
    "regex-compact": ("--strategy", "regex", "--prompt-style", "compact"),
    "regex-examples": ("--strategy", "regex", "--prompt-style", "examples"),
    "default-retrieve3": ("--retrieve", "3"),
    "default-check": ("--grounding", "check"),
    **dict.fromkeys(PEERS),
}
SYSTEM_LABELS = {
    "default": "toolcall, no strategy chosen (the default for this server)",
    "regex": "toolcall regex (the default elsewhere)",
    "schema": "toolcall schema",
    "schema-json": "toolcall schema `--schema-mode json`",
    "stream": "toolcall stream",
    "stream-native": "toolcall stream `--stream-mode native`",
    "schema-required": "toolcall schema `--schema-mode required`",
    "regex-compact": "toolcall regex `--prompt-style compact`",
    "regex-examples": "toolcall regex `--prompt-style examples`",
    "default-retrieve3": "toolcall, no strategy chosen, `--retrieve 3`",
    "default-check": "toolcall, no strategy chosen, `--grounding check`",
    **{name: peer.label for name, peer in PEERS.items()},
}

# --- the tools' own answers ----------------------------------------------------------------------


def load_tool_functions(dirs: Sequence[Path]) -> dict[str, Callable[..., Any]]:
    """The @tool functions of these tools.d directories, by name (imported as toolcall does)."""
    from toolcall_cli.tools.registry import TOOL_MARK

    found: dict[str, Callable[..., Any]] = {}
    for number, directory in enumerate(dirs):
        for path in sorted(directory.glob("*.py")):
            if path.name.startswith("_"):
                continue
            spec = importlib.util.spec_from_file_location(f"bench_truth_{number}_{path.stem}", path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
            for value in vars(module).values():
                if callable(value) and hasattr(value, TOOL_MARK):
                    found[value.__name__] = value
    return found


Expected = ExpectedAnswer
"""What a right answer holds: toolcall eval's own (toolcall_cli/evaluate/_grading.py)."""


@contextlib.contextmanager
def fixed_now(now: str | None) -> Iterator[None]:
    """get_time reads the bench's fixed instant (questions.json's "now"), as every system's does."""
    with eval_fixed_now(now):
        yield


def _reference(path: str) -> str:
    """A path into the tools' results (`w.high_c`) as a case file writes it (`$w.high_c`)."""
    return "$" + path


def case_record(question: dict[str, Any], now: str | None) -> dict[str, Any]:
    """One bench question as a `toolcall eval` case: the tool calls that compute its answer,
    and what the answer must hold. toolcall and every peer are asked, and graded, from this."""
    expect = question["expect"]
    answer: dict[str, Any] = {
        "compute": [
            {"as": step["as"], "tool": step["tool"], "args": step["args"]}
            for step in question["truth"]
        ]
    }
    if expect.get("all"):
        answer["numbers"] = [_reference(p) for p in expect["all"]]
    if expect.get("text_any"):
        answer["any"] = [
            _reference(p) if re.fullmatch(r"[a-z]\w*\.\w+", p) else p for p in expect["text_any"]
        ]
    if expect.get("times"):
        answer["times"] = [_reference(p) for p in expect["times"]]
    if "tol" in question:  # else a figure must round to the expected one as the answer wrote it
        tol = question["tol"]
        answer["tolerance"] = {"abs": tol.get("abs", 0.01), "rel": tol.get("rel", 0.01)}
    record = {"id": question["id"], "question": question["question"], "lang": question["lang"]}
    return {**record, "now": now, "answer": answer}


def write_case_file(questions: Sequence[dict[str, Any]], now: str | None, path: Path) -> Path:
    """The bench's questions as one case file, beside the bench's tools (its `tools` is
    relative to it): what `toolcall eval` runs and the peers are fed."""
    tools = os.path.relpath(BENCH_TOOLS, path.parent)
    lines = [
        json.dumps({**case_record(q, now), "tools": tools}, ensure_ascii=False) for q in questions
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def expected_answer(
    question: dict[str, Any], tools: dict[str, Callable[..., Any]], now: str | None = None
) -> Expected:
    """The answer a question expects, computed by calling the tools as `toolcall eval` does."""
    case = case_from(case_record(question, now), EVAL, question["id"])
    assert case.answer is not None
    with fixed_now(now):
        return eval_expected_answer(case.answer, tools, question["id"])


def is_correct(answer: str, expected: Expected) -> bool:
    return expected.holds(answer)


WRONG_KINDS = ("wrong number", "wrong tool", "no tool", "invented")
"""Why a wrong answer was wrong, first match wins (toolcall eval's kinds, named as this report
always named them):
- no tool: no tool was called, though every question needs one;
- wrong tool: a tool the answer needs was never called;
- invented: the answer states a figure found neither in the question nor in any tool result;
- wrong number: the figures come from the question or the results, but are not the expected
  ones (a wrong argument, the wrong field, a wrong name or city)."""
EVAL_KINDS = {
    "no tool": "no tool",
    "wrong tool": "wrong tool",
    "invented answer": "invented",
    "wrong answer": "wrong number",
}


def wrong_kind(record: dict[str, Any], question_text: str, needed: Iterable[str]) -> str:
    called = set(record.get("called") or [])
    if not called and not record.get("tool_calls"):
        return "no tool"
    if called and not set(needed) <= called:
        return "wrong tool"
    results = record.get("results")
    if results is not None and invented(
        str(record.get("answer") or ""), question_text, [str(r) for r in results]
    ):
        return "invented"
    return "wrong number"


# --- one run ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sampling:
    temperature: float | None
    seed: int | None
    max_tokens: int | None = None

    def describe(self, toolcall: bool = False) -> str:
        cap = f", max_tokens {self.max_tokens}" if self.max_tokens else ""
        if toolcall and self.temperature is None:
            # toolcall chooses for a llama.cpp server when nobody did (its traces show it)
            chosen = "toolcall's default for a llama.cpp server (temperature 0)"
            return f"{chosen}, seed {self.seed}{cap}"
        if self.temperature is None and self.seed is None:
            return f"the server's default sampling (temperature 0.8, a new seed per request){cap}"
        if self.temperature is None:
            return f"the server's temperature (0.8), seed {self.seed}{cap}"
        return f"temperature {self.temperature:g}, seed {self.seed}{cap}"


def toolcall_command() -> list[str]:
    return [sys.executable, "-m", "toolcall_cli"]


def toolcall_sampling_flags() -> set[str]:
    """The sampling flags `toolcall run` offers that send to the server (issue 15 adds them)."""
    help_text = subprocess.run(
        [*toolcall_command(), "run", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
        check=False,
    ).stdout
    flags = {f for f in ("--temperature", "--top-p", "--max-tokens") if f in help_text}
    # --seed exists from the start, but only for the offline model; it reaches the server
    # once the sampling flags do.
    if "--temperature" in help_text:
        flags.add("--seed")
    return flags


EVAL_STRATEGY: dict[str, tuple[str, tuple[str, ...]]] = {
    "default": ("default", ()),
    "regex": ("regex", ()),
    "schema": ("schema", ()),
    "schema-json": ("schema-json", ()),
    "stream": ("stream", ()),
    "stream-native": ("stream-native", ()),
    "schema-required": ("schema-required", ()),
    "regex-compact": ("regex", ("--prompt-style", "compact")),
    "regex-examples": ("regex", ("--prompt-style", "examples")),
    "default-retrieve3": ("default", ("--retrieve", "3")),
    "default-check": ("default", ("--grounding", "check")),
}
"""Each toolcall system as `toolcall eval` runs it: its --strategy, and the other flags."""
EVAL_LABELS = {
    "default": "default",
    "regex": "regex",
    "schema": "schema tools",
    "schema-json": "schema json",
    "schema-required": "schema required",
    "stream": "stream tags",
    "stream-native": "stream native",
}
"""Each --strategy word, and the strategy's name in eval's results."""
EXIT_BY_STOP = {"answered": 0, "limit": 3, "model_failed": 1, "input_rejected": 2}


def eval_groups(systems: Sequence[str]) -> dict[tuple[str, ...], list[str]]:
    """The toolcall systems by the flags (beyond the strategy) one `toolcall eval` takes."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for system in systems:
        if system in EVAL_STRATEGY:
            groups.setdefault(EVAL_STRATEGY[system][1], []).append(system)
    return groups


def run_toolcall_eval(
    case_file: Path,
    systems: Sequence[str],
    args: argparse.Namespace,
    sampling: Sampling,
    home: Path,
    folder: Path,
) -> dict[tuple[str, str], dict[str, Any]]:
    """The systems of one group (the same flags beside the strategy) on every case, through
    `toolcall eval` exactly as a user runs it; (question id, system) -> the run's record. The
    eval's folder keeps its results, so an interrupted bench resumes there too."""
    strategies = [EVAL_STRATEGY[s][0] for s in systems]
    command = [*toolcall_command(), "eval", str(case_file), "--base-url", args.base_url,
               "--model", args.model, "--strategy", ",".join(strategies), "--jobs", str(args.jobs),
               "--timeout", f"{args.timeout:g}", "--yes", "--json", "--out", str(folder),
               *EVAL_STRATEGY[systems[0]][1]]  # fmt: skip
    if (folder / "results.jsonl").exists():
        command.append("--resume")
    if args.max_iterations:
        command += ["--max-iterations", str(args.max_iterations)]
    for flag, value in (("--temperature", sampling.temperature), ("--seed", sampling.seed),
                        ("--max-tokens", sampling.max_tokens)):  # fmt: skip
        if value is not None:
            command += [flag, str(value)]
    # An empty config home: a user's own tools.d or profiles must not change what is measured.
    env = {**os.environ, "XDG_CONFIG_HOME": str(home), "HOME": str(home), "NO_COLOR": "1"}
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"realmodel_eval: toolcall eval failed: {done.stderr.strip()[-500:]}")
    by_label = {EVAL_LABELS[EVAL_STRATEGY[s][0]]: s for s in systems}
    return {
        (run["case"], by_label[run["strategy"]]): eval_record(run)
        for run in json.loads(done.stdout)["runs"]
    }


def eval_record(run: dict[str, Any]) -> dict[str, Any]:
    """What the bench keeps of one `toolcall eval` run (its trace has the rest)."""
    stop = run.get("stop_reason") or ""
    return {
        "answer": run.get("answer"),
        "best_effort": stop == "limit" and run.get("answer") is not None,
        "stop_reason": stop,
        "iterations": run.get("iterations", 0),
        "tool_calls": run.get("calls", 0),
        "tokens": run.get("tokens", 0),
        "called": [str(call).split("(", 1)[0] for call in run.get("made_calls") or ()],
        "results": run.get("results") or [],
        "exit": EXIT_BY_STOP.get(stop, 1),
        "timeout": "timeout" in str(run.get("detail") or "").casefold(),
        "wall": run.get("wall_time") or 0.0,
        "error": run.get("failure") or "",
        "trace": run.get("trace"),
        "eval_verdict": [run.get("outcome"), run.get("kind")],
    }


def run_peer(
    system: str, question: str, args: argparse.Namespace, sampling: Sampling, now: str | None
) -> dict[str, Any]:
    peer = PEERS[system]
    job = {
        "question": question,
        "base_url": args.base_url,
        "model": args.model,
        "max_steps": PEER_MAX_STEPS,
        "tool_dirs": [str(bundled_tools_dir()), str(BENCH_TOOLS)],
        "tools": toolcall_tool_specs(),
        "sampling": {
            k: v
            for k, v in (
                ("temperature", sampling.temperature),
                ("seed", sampling.seed),
                ("max_tokens", sampling.max_tokens),
            )
            if v is not None
        },
    }
    env = {**os.environ, **({NOW_VARIABLE: now} if now else {}), "PYTHONWARNINGS": "ignore"}
    started = time.monotonic()
    try:
        done = subprocess.run(
            [str(PEERS_VENV / "bin" / "python"), str(EVAL / peer.runner)],
            input=json.dumps(job),
            capture_output=True,
            text=True,
            timeout=args.timeout,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"answer": None, "exit": None, "timeout": True, "wall": time.monotonic() - started}
    lines = done.stdout.strip().splitlines()
    try:
        out = json.loads(lines[-1])
    except (IndexError, ValueError):
        tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
        return {"answer": None, "exit": done.returncode, "timeout": False, "error": tail[0][:300]}
    failed = bool(out.get("error"))
    return {
        "answer": None if failed else out.get("answer", ""),
        "exit": 1 if failed else 0,
        "timeout": False,
        "wall": time.monotonic() - started,
        "error": out.get("error", ""),
        "stop_reason": out.get("state", "error" if failed else ""),
        "iterations": out.get("steps", 0),
        "tool_calls": out.get("tool_calls", 0),
        "called": out.get("called", []),
        "results": out.get("results", []),
        "tokens": out.get("tokens") or 0,
        "replies": out.get("replies", []),
        "sent": out.get("sent", {}),
    }


@functools.lru_cache(maxsize=1)
def toolcall_tool_specs() -> list[dict[str, Any]]:
    """Every tool as toolcall's registry describes it to a model: the peers get the same."""
    from toolcall_cli.tools.registry import Tool

    functions = load_tool_functions([bundled_tools_dir(), BENCH_TOOLS])
    specs = [Tool.from_function(f).spec for f in functions.values()]
    return [
        {"name": s.name, "description": s.description, "parameters": s.parameters} for s in specs
    ]


def bundled_tools_dir() -> Path:
    from toolcall_cli.tools.loader import bundled_tools_dir as found

    return found()


def classify(
    record: dict[str, Any],
    expected: Expected,
    tool_names: Iterable[str],
    question: dict[str, Any] | None = None,
) -> None:
    """Sets outcome (correct | wrong | no answer), wrong_kind, non_answer, ended_0_non_answer."""
    answer = record.get("answer")
    results = [str(r) for r in record.get("results") or []]
    kind = None if answer is None else non_answer_kind(answer, tool_names, results)
    record["non_answer"] = kind
    record["ended_0_non_answer"] = record.get("exit") == 0 and (answer is None or kind is not None)
    if record.get("exit") != 0 or answer is None or kind is not None:
        record["outcome"] = "no answer"
    else:
        record["outcome"] = "correct" if is_correct(answer, expected) else "wrong"
    record["wrong_kind"] = None
    if record["outcome"] == "wrong" and question is not None:
        needed = {step["tool"] for step in question["truth"]}
        record["wrong_kind"] = wrong_kind(record, question["question"], needed)
    # toolcall's best-effort answer at the limit exits 3: not counted, but worth knowing
    record["best_effort_correct"] = bool(
        record.get("best_effort") and answer and kind is None and is_correct(answer, expected)
    )


# --- the report ---------------------------------------------------------------------------------

_MARK = {"correct": "✓", "wrong": "✗", "no answer": "·"}


def _mean(values: list[float]) -> str:
    return f"{sum(values) / len(values):.1f}" if values else "–"


HALVES = ("held-out", "tuning")
HALF_TITLES = {
    "held-out": "Held-out half (the headline: nothing is tuned on it)",
    "tuning": "Tuning half (defaults and thresholds are chosen on it)",
}
TABLE_NOTE = (
    "A run is *correct* when it ended 0 with the expected figure (or city, weekday, clock time) "
    "in its answer; *no answer* when it exited non-zero, timed out, or ended with a non-answer "
    "(empty, an echoed engine note or a framework's own give-up line, a bare tool name, "
    "call-shaped JSON, a tool result handed back raw). *wrong* is split by kind: *number* (the "
    "figures come from the question or the results but are not the expected ones), *tool* (a "
    "tool the answer needs was never called), *no tool* (no tool called at all), *invented* (a "
    "figure in the answer is in neither the question nor any result). *ended 0 with a "
    "non-answer* counts the runs that still exited 0 (the framework returned normally). "
    "*best-effort right* counts toolcall runs that exited 3 at the limit with a right "
    "best-effort answer (counted as no answer). Iterations are model calls; tokens (prompt and "
    "reply, every call) and wall time are means per run."
)


def system_table(records: list[dict[str, Any]], systems: list[str]) -> list[str]:
    lines = [
        "| system | runs | correct | wrong | wrong: number / tool / no tool / invented "
        "| no answer | ended 0 with a non-answer | best-effort right | mean iterations "
        "| mean tokens | mean wall time (s) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for system in systems:
        mine = [r for r in records if r["system"] == system]
        if not mine:
            continue
        count = Counter(r["outcome"] for r in mine)
        kinds = Counter(r.get("wrong_kind") for r in mine if r["outcome"] == "wrong")
        lines.append(
            f"| {SYSTEM_LABELS[system]} | {len(mine)} | {count['correct']}/{len(mine)} "
            f"| {count['wrong']} | {' / '.join(str(kinds[k]) for k in WRONG_KINDS)} "
            f"| {count['no answer']} "
            f"| {sum(1 for r in mine if r['ended_0_non_answer'])} "
            f"| {sum(1 for r in mine if r.get('best_effort_correct'))} "
            f"| {_mean([float(r.get('iterations') or 0) for r in mine])} "
            f"| {_mean([float(r.get('tokens') or 0) for r in mine]).removesuffix('.0')} "
            f"| {_mean([float(r.get('wall') or 0) for r in mine])} |"
        )
    return lines


def ceiling_line(records: list[dict[str, Any]]) -> str:
    """What no choice among the systems could beat: each question of each pass counted right
    when any toolcall system (then any system at all) got it right. A target above this is out
    of reach for every strategy and setting that ran, not only for the one that ships."""
    asked = {(r["pass"], r["qid"]) for r in records}
    right = [r for r in records if r["outcome"] == "correct"]
    by_toolcall = {(r["pass"], r["qid"]) for r in right if r["system"] not in PEERS}
    by_any = {(r["pass"], r["qid"]) for r in right}
    return (
        "Ceiling: had each question of each pass gone to whichever toolcall system got it "
        f"right, toolcall would have {len(by_toolcall)}/{len(asked)}; to whichever system at "
        f"all, {len(by_any)}/{len(asked)}."
    )


def render_report(
    records: list[dict[str, Any]],
    questions: list[dict[str, Any]],
    systems: list[str],
    expected: dict[str, Expected],
    meta: dict[str, str],
    half_of: dict[str, str] | None = None,
) -> str:
    half_of = half_of or {}
    lines = [
        "# Real-model evaluation",
        "",
        f"**{meta['label']}**",
        "",
        "Written by `bench/realmodel_eval.py` (see bench/README.md). Every expected answer is "
        "computed by calling the tools the model is given.",
        "",
    ]
    lines += [f"- {k}: {v}" for k, v in meta.items() if k != "label"]
    lines += ["", "## Per system", "", TABLE_NOTE, ""]
    halves = [h for h in HALVES if any(r.get("half") == h for r in records)]
    for half in halves:
        mine = [r for r in records if r.get("half") == half]
        lines += [f"### {HALF_TITLES[half]}", "", *system_table(mine, systems), ""]
        lines += [ceiling_line(mine), ""]
    if len(halves) != 1:
        lines += ["### All questions run" if halves else "### All", ""]
        lines += [*system_table(records, systems), ""]
    lines += [
        "",
        "## Per question",
        "",
        "One mark per pass: ✓ correct, ✗ wrong, · no answer (0 after it: it ended 0 with a "
        "non-answer; ⏱: timed out).",
        "",
        "| question | expected | " + " | ".join(systems) + " |",
        "|---|---|" + "---|" * len(systems),
    ]
    for question in questions:
        qid = question["id"]
        if not any(r["qid"] == qid for r in records):
            continue
        cells = []
        for system in systems:
            mine = sorted(
                (r for r in records if r["qid"] == qid and r["system"] == system),
                key=lambda r: r["pass"],
            )
            cells.append(
                " ".join(
                    _MARK[r["outcome"]]
                    + ("0" if r["ended_0_non_answer"] else "")
                    + ("⏱" if r.get("timeout") else "")
                    for r in mine
                )
                or " "
            )
        text = question["question"].replace("|", "\\|")
        where = {"held-out": " (held-out)", "tuning": " (tuning)"}.get(half_of.get(qid, ""), "")
        lines.append(
            f"| `{qid}`{where} {text} | {expected[qid].describe()} | " + " | ".join(cells) + " |"
        )
    lines += ["", "## How the runs ended", ""]
    lines += ["| system | exit codes | stop reasons | non-answers | most calls in one reply |"]
    lines += ["|---|---|---|---|---|"]
    for system in systems:
        mine = [r for r in records if r["system"] == system]
        if not mine:
            continue
        exits = Counter("timeout" if r.get("timeout") else str(r.get("exit")) for r in mine)
        stops = Counter(r.get("stop_reason") or "–" for r in mine)
        kinds = Counter(r["non_answer"] for r in mine if r.get("non_answer"))
        lines.append(
            f"| {system} | {_counts(exits)} | {_counts(stops)} | {_counts(kinds) or '–'} "
            f"| {max((r.get('max_calls_in_reply') or 0 for r in mine), default=0)} |"
        )
    lines.append("")
    return "\n".join(lines)


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counter.most_common())


def git_commit() -> str:
    def git(*argv: str) -> str:
        return subprocess.run(
            ["git", *argv], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip()

    engine = ("toolcall_cli", "tools.d", "pyproject.toml", "setup.py")
    dirty = git("status", "--porcelain", "--", *engine)
    last = git("log", "-1", "--format=%h", "--", *engine)
    return (
        f"{git('rev-parse', '--short', 'HEAD')} (the engine as of {last}: the last commit "
        "that changed toolcall_cli/, tools.d/ or the packaging)"
        + (", with uncommitted engine changes" if dirty else "")
    )


def server_facts(base_url: str) -> str:
    """The model file and context size llama.cpp reports on /props (other servers: the URL)."""
    root = re.sub(r"/v1/?$", "", base_url)
    try:
        with urllib.request.urlopen(f"{root}/props", timeout=5) as response:
            props = json.load(response)
    except (OSError, ValueError):
        return base_url
    settings = props.get("default_generation_settings", {})
    return (
        f"{base_url} (llama.cpp {props.get('build_info', '?')}; model file "
        f"{Path(str(props.get('model_path', '?'))).name}, {props.get('model_ftype', '?')}; "
        f"context {settings.get('n_ctx', '?')} tokens)"
    )


def server_answers(base_url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url.rstrip('/')}/models", timeout=10):
            return True
    except (OSError, ValueError):
        return False


def _distribution(package: str) -> str:
    return package.split("[", 1)[0]


def peer_versions() -> dict[str, str]:
    """Each peer package's installed version in bench/.venv-peers ("" if missing)."""
    names = [_distribution(p) for p in PEER_PACKAGES]
    code = (
        "import importlib.metadata as m, json, sys\n"
        "def v(n):\n"
        "    try: return m.version(n)\n"
        "    except m.PackageNotFoundError: return ''\n"
        "print(json.dumps({n: v(n) for n in sys.argv[1:]}))"
    )
    python = PEERS_VENV / "bin" / "python"
    if not python.exists():
        return dict.fromkeys(names, "")
    done = subprocess.run(
        [str(python), "-c", code, *names], capture_output=True, text=True, check=False
    )
    try:
        found: dict[str, str] = json.loads(done.stdout)
    except ValueError:
        return dict.fromkeys(names, "")
    return found


def ensure_peers_venv() -> None:
    """bench/.venv-peers with every peer framework: made or completed with pip, said in a line."""
    python = PEERS_VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(PEERS_VENV)], check=True)
    versions = peer_versions()
    missing = [p for p in PEER_PACKAGES if not versions.get(_distribution(p))]
    if missing:
        print(f"realmodel_eval: installing {', '.join(missing)} in {PEERS_VENV.relative_to(ROOT)}")
        subprocess.run([str(python), "-m", "pip", "install", "-q", *missing], check=True)


def select(items: list[str], wanted: str | None, what: str) -> list[str]:
    if not wanted:
        return items
    chosen = [w.strip() for w in wanted.split(",") if w.strip()]
    unknown = [w for w in chosen if not any(i == w or i.startswith(w) for i in items)]
    if unknown:
        raise SystemExit(f"realmodel_eval: error: unknown {what}: {', '.join(unknown)}")
    # In the order asked for: a partial run then covers the questions chosen first.
    # An exact name means that one ("regex" is not also "regex-compact"); else a prefix.
    picked: list[str] = []
    for w in chosen:
        matches = [w] if w in items else [i for i in items if i.startswith(w)]
        picked += [i for i in matches if i not in picked]
    return picked


def run_order(
    questions: list[dict[str, Any]], systems: list[str], order: str
) -> list[tuple[dict[str, Any], str]]:
    if order == "system":
        return [(q, s) for s in systems for q in questions]
    return [(q, s) for q in questions for s in systems]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--base-url", default=os.environ.get("TOOLCALL_BENCH_BASE_URL"))
    parser.add_argument("--model", default="qwen", help="model name sent to the server")
    parser.add_argument("--questions", help="ids or id prefixes, comma-separated (default: all)")
    parser.add_argument("--systems", help=f"comma-separated, of: {', '.join(SYSTEMS)}")
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--seeds", default=",".join(map(str, DEFAULT_SEEDS)))
    parser.add_argument("--temperature", type=float, default=None)
    parser.add_argument(
        "--max-tokens", type=int, default=None, help="caps every reply, for every system alike"
    )
    parser.add_argument(
        "--jobs", type=int, default=1, help="runs at a time (give the server as many slots)"
    )
    parser.add_argument(
        "--order",
        choices=("question", "system"),
        default="question",
        help="question: every system on a question before the next (fair against a machine "
        "whose speed drifts); system: one system through every question before the next, so "
        "the server's prompt cache keeps its system prompt and tools (much faster on one slot)",
    )
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per run")
    parser.add_argument("--max-iterations", type=int, default=None, help="(toolcall's default)")
    parser.add_argument("--records", type=Path, default=DEFAULT_RECORDS)
    parser.add_argument("--report", type=Path, default=DEFAULT_REPORT)
    parser.add_argument("--resume", action="store_true", help="keep the records' finished runs")
    parser.add_argument("--label", default="Real-model evaluation")
    parser.add_argument("--report-only", action="store_true", help="rewrite the report only")
    parser.add_argument("--notes", type=Path, help="a Markdown file appended to the report")
    parser.add_argument(
        "--half",
        choices=(*HALVES, "all"),
        default="all",
        help="only this half of bench/eval/split.json; its questions are then asked in turn "
        "by category, so a run cut short still covers every category",
    )
    parser.add_argument("--server-note", default="", help="how the server was started (report)")
    return parser.parse_args(argv)


def run_sampling(args: argparse.Namespace, offered: set[str], seed: int) -> Sampling:
    return Sampling(
        temperature=args.temperature if "--temperature" in offered else None,
        seed=seed if "--seed" in offered else None,
        max_tokens=args.max_tokens if "--max-tokens" in offered else None,
    )


def run_toolcall_systems(
    questions: list[dict[str, Any]],
    systems: list[str],
    seeds: list[int],
    args: argparse.Namespace,
    offered: set[str],
    home: Path,
    done: set[tuple[int, str, str]],
    now: str | None,
) -> dict[tuple[int, str, str], dict[str, Any]]:
    """Every toolcall system's runs, through `toolcall eval` on the bench's case file: one eval
    per pass and group of flags, in its own folder beside the records. (pass, question id,
    system) -> the run's record."""
    found: dict[tuple[int, str, str], dict[str, Any]] = {}
    for number, seed in enumerate(seeds, start=1):
        for flags, members in eval_groups(systems).items():
            pending = [
                s for s in members if any((number, q["id"], s) not in done for q in questions)
            ]
            if not pending:
                continue
            folder = args.records.parent / "eval" / f"{'-'.join(flags) or 'plain'}-seed{seed}"
            folder.mkdir(parents=True, exist_ok=True)
            cases = write_case_file(questions, now, folder / "cases.jsonl")
            sampling = run_sampling(args, offered, seed)
            runs = run_toolcall_eval(cases, pending, args, sampling, home, folder / "out")
            found.update({(number, qid, system): run for (qid, system), run in runs.items()})
    return found


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.base_url and not args.report_only:
        print(
            "realmodel_eval: skipped: no server given (--base-url URL or TOOLCALL_BENCH_BASE_URL)"
        )
        return 0
    data = json.loads((EVAL / "questions.json").read_text(encoding="utf-8"))
    questions = [q for q in data["questions"]]
    chosen_ids = select([q["id"] for q in questions], args.questions, "question")
    by_id = {q["id"]: q for q in questions}
    questions = [by_id[i] for i in chosen_ids]
    half_of = load_split()
    if args.half != "all":
        questions = by_category_in_turn([q for q in questions if half_of.get(q["id"]) == args.half])
    now = data.get("now")
    systems = select(list(SYSTEMS), args.systems, "system")
    tools = load_tool_functions([bundled_tools_dir(), BENCH_TOOLS])
    expected = {q["id"]: expected_answer(q, tools, data.get("now")) for q in questions}

    records: list[dict[str, Any]] = []
    if (args.resume or args.report_only) and args.records.exists():
        records = [json.loads(line) for line in args.records.read_text().splitlines() if line]
        for record in records:  # graded again: the grader may have learnt since they ran
            if record["qid"] in expected:
                record["half"] = half_of.get(record["qid"], "")
                classify(record, expected[record["qid"]], tools, by_id[record["qid"]])
    if not args.report_only:
        if not server_answers(args.base_url):
            print(f"realmodel_eval: error: no server answers at {args.base_url}", file=sys.stderr)
            return 1
        if any(SYSTEMS[s] is None for s in systems):
            ensure_peers_venv()
        offered = toolcall_sampling_flags()
        seeds = [int(s) for s in args.seeds.split(",")][: args.passes]
        seeds += [seeds[-1] + i + 1 for i in range(args.passes - len(seeds))]
        done = {  # a run killed from outside (exit < 0) is run again
            (r["pass"], r["qid"], r["system"])
            for r in records
            if not (isinstance(r.get("exit"), int) and r["exit"] < 0)
        }
        args.records.parent.mkdir(parents=True, exist_ok=True)
        if not args.resume:
            args.records.write_text("")
        with tempfile.TemporaryDirectory(prefix="toolcall-bench-home-") as home:
            runs: list[tuple[int, int, Sampling, dict[str, Any], str]] = []
            for number, seed in enumerate(seeds, start=1):
                sampling = Sampling(
                    temperature=args.temperature if "--temperature" in offered else None,
                    seed=seed if "--seed" in offered else None,
                    max_tokens=args.max_tokens if "--max-tokens" in offered else None,
                )
                runs += [
                    (number, seed, sampling, question, system)
                    for question, system in run_order(questions, systems, args.order)
                    if (number, question["id"], system) not in done
                ]
            toolcall_runs = run_toolcall_systems(
                questions, systems, seeds, args, offered, Path(home), done, now
            )
            written = threading.Lock()

            def measure(number: int, seed: int, sampling: Sampling, question: dict[str, Any],
                        system: str) -> None:  # fmt: skip
                load = os.getloadavg()[0]
                peer = PEERS.get(system)
                if peer is not None and peer.temperature is not None:
                    sampling = dataclasses.replace(sampling, temperature=peer.temperature)
                if system in PEERS:
                    record = run_peer(system, question["question"], args, sampling, now)
                else:  # run already, by `toolcall eval`
                    record = dict(toolcall_runs[(number, question["id"], system)])
                record.update(
                    {
                        "pass": number,
                        "seed": seed,
                        "sampling": sampling.describe(toolcall=system not in PEERS),
                        "qid": question["id"],
                        "system": system,
                        "jobs": args.jobs,
                        "load1": round(load, 2),
                        "half": half_of.get(question["id"], ""),
                    }
                )
                classify(record, expected[question["id"]], tools, question)
                with written:
                    records.append(record)
                    with args.records.open("a", encoding="utf-8") as out:
                        out.write(json.dumps(record, ensure_ascii=False) + "\n")
                    print(
                        f"pass {number} {question['id']:<24} {system:<14} "
                        f"{record['outcome']:<9} exit={record.get('exit')} "
                        f"{record.get('wall', 0):6.1f}s  {str(record.get('answer'))[:70]!r}",
                        flush=True,
                    )

            # --jobs 2 against a server with two slots (llama-server -np 2): two runs share the
            # CPU, so each run's wall time grows, but the whole bench takes less time.
            with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
                for future in [pool.submit(measure, *run) for run in runs]:
                    future.result()
    # A run killed by a signal from outside (exit < 0, not our timeout) measured nothing.
    killed = [r for r in records if isinstance(r.get("exit"), int) and r["exit"] < 0]
    records = [r for r in records if r not in killed]
    samplings = sorted({r.get("sampling", "?") for r in records})
    meta = {
        "label": args.label,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "model": f"`{args.model}` as named to the server",
        "server": server_facts(args.base_url) if args.base_url else "–",
        "toolcall commit measured": git_commit(),
        "peers (bench/.venv-peers)": ", ".join(
            f"{k} {v or '?'}" for k, v in peer_versions().items()
        ),
        "server started as": args.server_note or "(not said: --server-note)",
        "fixed instant get_time reads (TOOLCALL_NOW)": str(now),
        "load average (1 min) at each run's start": _load_summary(records),
        "passes and seeds": ", ".join(
            sorted({f"pass {r['pass']}: seed {r['seed']}" for r in records})
        ),
        "sampling": "; ".join(samplings),
        "timeout per run": f"{args.timeout:g} s (a timeout counts as no answer)",
        "runs at a time (--jobs; wall times are per run, so they grow with it)": ", ".join(
            sorted({str(r.get("jobs", 1)) for r in records})
        ),
        "runs killed from outside (left out)": str(len(killed)),
        "questions": f"{len({r['qid'] for r in records})} of {len(data['questions'])} "
        f"({', '.join(sorted({q['lang'] for q in questions}))})",
    }
    shown = [s for s in SYSTEMS if any(r["system"] == s for r in records)]
    report = render_report(
        records, data["questions"], shown, expected_all(data, tools), meta, half_of
    )
    if args.notes:
        report += "\n" + args.notes.read_text(encoding="utf-8")
    args.report.write_text(report, encoding="utf-8")
    print(f"realmodel_eval: wrote {args.report} from {len(records)} runs")
    return 0


def _load_summary(records: list[dict[str, Any]]) -> str:
    loads = sorted(float(r["load1"]) for r in records if r.get("load1") is not None)
    if not loads:
        return "not recorded"
    middle = loads[len(loads) // 2]
    return f"median {middle:.1f}, from {loads[0]:.1f} to {loads[-1]:.1f} (2 cores)"


def load_split(path: Path = EVAL / "split.json") -> dict[str, str]:
    """question id -> its half, from the committed split (empty if there is none)."""
    if not path.exists():
        return {}
    halves: dict[str, list[str]] = json.loads(path.read_text(encoding="utf-8"))["halves"]
    return {qid: half for half, ids in halves.items() for qid in ids}


def by_category_in_turn(questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One question of each category (first tool) in turn, each category in its own order."""
    queues: dict[str, list[dict[str, Any]]] = {}
    for question in questions:
        queues.setdefault(question["truth"][0]["tool"], []).append(question)
    ordered: list[dict[str, Any]] = []
    while any(queues.values()):
        for queue in queues.values():
            if queue:
                ordered.append(queue.pop(0))
    return ordered


def expected_all(data: dict[str, Any], tools: dict[str, Callable[..., Any]]) -> dict[str, Expected]:
    return {q["id"]: expected_answer(q, tools, data.get("now")) for q in data["questions"]}


if __name__ == "__main__":
    sys.exit(main())
