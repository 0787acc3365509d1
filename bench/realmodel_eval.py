"""Right answers from a real model: toolcall's strategies beside smolagents, graded by the tools.

    python bench/realmodel_eval.py --base-url http://127.0.0.1:8181/v1      # the full run
    python bench/realmodel_eval.py --questions c-mul-add,w-beijing-now --systems regex --passes 1

Runs only when a server is given (--base-url or TOOLCALL_BENCH_BASE_URL); otherwise it says it
skipped and exits 0. Every question's expected answer is computed by calling the same tool
functions the model is given (bench/eval/questions.json says which calls), so no number here can
drift from the tools. Each run is a subprocess (`toolcall run --json`, or smolagents'
ToolCallingAgent in bench/.venv-peers), appended to a JSONL record file as it ends (so an
interrupted run resumes with --resume), and bench/results/realmodel_30questions.md is written from
those records.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import contextlib
import dataclasses
import datetime
import functools
import importlib.util
import json
import math
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


def _lookup(path: str, bound: dict[str, Any]) -> Any:
    """`w.high_c` -> bound["w"]["high_c"]; `x` -> bound["x"]."""
    name, *fields = path.split(".")
    value = bound[name]
    for field in fields:
        value = value[field]
    return value


def _resolve(value: Any, bound: dict[str, Any]) -> Any:
    """`$w.high_c` -> that value; `($w.high_c+$w.low_c)/2` -> an expression over results."""
    if not isinstance(value, str) or "$" not in value:
        return value
    if re.fullmatch(r"\$[\w.]+", value):
        return _lookup(value[1:], bound)
    return re.sub(r"\$([a-z]\w*(?:\.\w+)?)", lambda m: repr(_lookup(m.group(1), bound)), value)


@dataclass(frozen=True)
class Expected:
    numbers: tuple[float, ...]
    """Every one must appear in the answer, within tolerance."""
    texts: tuple[str, ...]
    """One of these must appear in the answer (case-insensitive)."""
    abs_tol: float
    rel_tol: float
    times: tuple[tuple[int, int], ...] = ()
    """Clock times (hour, minute), each to appear in the answer in a 24- or 12-hour form."""
    explicit_tol: bool = True
    """The question sets its tolerance; otherwise a figure must round as the answer wrote it."""

    def describe(self) -> str:
        if self.times:
            return " and ".join(f"{h:02d}:{m:02d}" for h, m in self.times)
        if self.texts:
            return " or ".join(self.texts)
        return " and ".join(f"{n:g}" for n in self.numbers)


@contextlib.contextmanager
def fixed_now(now: str | None) -> Iterator[None]:
    """get_time reads the bench's fixed instant (questions.json's "now"), as every system's does."""
    before = os.environ.get(NOW_VARIABLE)
    if now is not None:
        os.environ[NOW_VARIABLE] = now
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(NOW_VARIABLE, None)
        else:
            os.environ[NOW_VARIABLE] = before


def _clock(text: str) -> tuple[int, int]:
    hour, minute = text.split(":")[:2]
    return int(hour), int(minute)


def expected_answer(
    question: dict[str, Any], tools: dict[str, Callable[..., Any]], now: str | None = None
) -> Expected:
    bound: dict[str, Any] = {}
    with fixed_now(now):
        for step in question["truth"]:
            args = {k: _resolve(v, bound) for k, v in step["args"].items()}
            bound[step["as"]] = tools[step["tool"]](**args)
    expect = question["expect"]
    tol = question.get("tol", {})
    return Expected(
        numbers=tuple(float(_lookup(p, bound)) for p in expect.get("all", ())),
        texts=tuple(
            str(_lookup(p, bound)) if re.fullmatch(r"[a-z]\w*\.\w+", p) else p
            for p in expect.get("text_any", ())
        ),
        abs_tol=float(tol.get("abs", 0.01)),
        rel_tol=float(tol.get("rel", 0.01)),
        times=tuple(_clock(str(_lookup(p, bound))) for p in expect.get("times", ())),
        explicit_tol="tol" in question,
    )


# --- grading -------------------------------------------------------------------------------------

_NUMBER = re.compile(
    r"(?P<neg>零下|负|minus\s|[-−–](?=\d))?\s*"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"\s*(?P<scale>万|亿|thousand|million|billion|k\b|m\b|bn\b)?",
    re.I,
)
_SCALES = {
    "万": 1e4,
    "亿": 1e8,
    "thousand": 1e3,
    "k": 1e3,
    "million": 1e6,
    "m": 1e6,
    "billion": 1e9,
    "bn": 1e9,
}


def figures_in(text: str) -> list[tuple[float, ...]]:
    """Every number in an answer, each with its readings: "1.2 亿" gives (1.2, 120000000)."""
    return [tuple(value for value, _ in figure) for figure in _readings(text)]


def _readings(text: str) -> list[tuple[tuple[float, float], ...]]:
    """Each number's readings as (value, half a unit of its last written digit): "41.8" is
    (41.8, 0.05), "1.2 亿" also (120000000, 5000000)."""
    found: list[tuple[tuple[float, float], ...]] = []
    for match in _NUMBER.finditer(text):
        first = match.start("neg") if match.group("neg") else match.start("num")
        before = text[max(0, first - 1) : first]
        if before == "_" or (before.isalnum() and before.isascii()):  # "call_1_0", "H2O"
            continue
        written = match.group("num").replace(",", "")
        value = float(written)
        if match.group("neg"):
            value = -value
        half = 0.5 * 10.0 ** -len(written.partition(".")[2])
        scale = (match.group("scale") or "").lower()
        if scale in _SCALES:
            found.append(((value, half), (value * _SCALES[scale], half * _SCALES[scale])))
        else:
            found.append(((value, half),))
    return found


def numbers_in(text: str) -> list[float]:
    """Every number in an answer, as written and scaled: "1.2 亿" gives 1.2 and 120000000."""
    return [value for figure in figures_in(text) for value in figure]


_CLOCK = re.compile(
    r"(?P<before>上午|早上|凌晨|中午|下午|晚上|傍晚)?\s*(?P<h>\d{1,2})\s*(?::|：|点|時|时)\s*"
    r"(?:(?P<m>\d{1,2})|(?P<half>半))?\s*(?:分)?\s*(?P<after>[ap]\.?\s?m\.?)?",
    re.I,
)
_AFTERNOON = ("下午", "晚上", "傍晚")


def times_in(text: str) -> set[tuple[int, int]]:
    """Clock times in an answer, 24-hour: "2:30 PM", "14:30", "下午2点30分", "3点半"."""
    found: set[tuple[int, int]] = set()
    for match in _CLOCK.finditer(text):
        hour = int(match.group("h"))
        minute = 30 if match.group("half") else int(match.group("m") or 0)
        after = (match.group("after") or "").lower().replace(".", "").replace(" ", "")
        if after == "pm" or match.group("before") in _AFTERNOON:
            hour = hour + 12 if hour < 12 else hour
        elif (after == "am" or match.group("before") in ("凌晨", "早上", "上午")) and hour == 12:
            hour = 0
        if hour < 24 and minute < 60:
            found.add((hour, minute))
    return found


_WEEKDAY_ZH = re.compile(r"(?:周|礼拜|禮拜|星期)([一二三四五六日天])")


def _folded(text: str) -> str:
    """Case folded, with 周五 / 礼拜五 / 星期天 written 星期五 / 星期日."""
    return _WEEKDAY_ZH.sub(lambda m: "星期" + m.group(1).replace("天", "日"), text).casefold()


def _close(value: float, half: float, want: float, expected: Expected) -> bool:
    """Within the question's own tolerance, or else the expected figure rounded as the answer
    wrote it: "41.84" or "42" for 41.8429, but not "443" for 444 (nor 1% off, as "443" is)."""
    if expected.explicit_tol:
        return math.isclose(value, want, rel_tol=expected.rel_tol, abs_tol=expected.abs_tol)
    return abs(value - want) <= half * (1 + 1e-9) + 1e-9


def is_correct(answer: str, expected: Expected) -> bool:
    if expected.times:
        return set(expected.times) <= times_in(answer)
    if expected.texts:
        folded = _folded(answer)
        return any(_folded(t) in folded for t in expected.texts)
    readings = [reading for figure in _readings(answer) for reading in figure]
    return all(
        any(_close(value, half, want, expected) for value, half in readings)
        for want in expected.numbers
    )


_ENGINE_NOTES = (
    "[toolcall]",
    "was not an answer",
    "note instead of answering",
    "note instead of",
    "the last 3 rounds",
    "rounds of tool calls made no progress",
    "i already called",
    "you already called",
    "tools are withdrawn",
    "do not call any tool",
    "that was the last round",
    "answer with what you have",
    "<tool_result",
    # issue 24's records: a note of the engine's own, repeated as the answer
    "(the same call",
    "a result you already have",
    "the result you already had",
    "result you already have from this run",
    "error: unknown tool",
    # a peer's own words, returned as its answer: LangGraph's at its step limit; smolagents'
    # note on an empty reply, which the model then gave as its final answer
    "need more steps to process this request",
    "did not contain any json blob",
)


def _call_shaped(value: Any) -> bool:
    if isinstance(value, list):
        return bool(value) and all(_call_shaped(v) for v in value)
    if not isinstance(value, dict):
        return False
    keys = set(value)
    return bool(
        {"tool_calls", "function", "tool_call"} & keys
        or ("name" in keys and keys & {"arguments", "parameters", "args"})
        # a result the model made up in a call's shape: {"name": "result", "id": "2", "value": 49}
        or ("name" in keys and keys & {"id", "value", "result"} and len(keys) <= 4)
    )


def _literal(text: str) -> Any:
    """JSON, or a Python literal (a call list printed with repr), or None."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def _holds_a_result(text: str, results: Iterable[str]) -> bool:
    """The answer is, or holds, a tool result's raw text (a JSON object, not a bare number)."""
    return any(
        len(result) >= 20 and result.lstrip().startswith(("{", "[")) and result.strip() in text
        for result in results
    )


def non_answer_kind(
    answer: str, tool_names: Iterable[str], results: Iterable[str] = ()
) -> str | None:
    """Why this text is not an answer at all, or None if it is one (right or wrong)."""
    text = answer.strip()
    if not text:
        return "empty"
    folded = text.casefold()
    if any(note in folded for note in _ENGINE_NOTES):
        return "echoed engine note"
    if folded.startswith("error"):
        return "echoed tool error"
    bare = text.strip("`'\" .。")
    if bare in set(tool_names) or re.fullmatch(r"call_\d+_\d+", bare):
        return "bare tool name"
    if "<tool_call>" in folded:
        return "call-shaped"
    unfenced = re.sub(r"^```\w*\s*|\s*```$", "", text)
    # smolagents' own at-the-limit answer can be "Calling tools:\n[{'id': ..., 'function': ...}]"
    unfenced = re.sub(r"^Calling tools:\s*", "", unfenced)
    value = _literal(unfenced)
    if _call_shaped(value):
        return "call-shaped"
    if re.match(r'^\s*\{\s*"name"\s*:\s*"\w+"\s*,\s*"(arguments|parameters)"', unfenced):
        return "call-shaped"  # a call cut short or with broken JSON
    # A tool result handed back as it came (issue 24: raw get_weather JSON ended 0), or any
    # bare JSON object: data for the model to read, not an answer for a person.
    if _holds_a_result(text, results) or isinstance(value, dict):
        return "echoed tool result"
    return None


WRONG_KINDS = ("wrong number", "wrong tool", "no tool", "invented")
"""Why a wrong answer was wrong, first match wins:
- no tool: no tool was called, though every question needs one;
- wrong tool: a tool the answer needs was never called;
- invented: the answer states a figure found neither in the question nor in any tool result;
- wrong number: the figures come from the question or the results, but are not the expected
  ones (a wrong argument, the wrong field, a wrong name or city)."""


def _grounded(figure: tuple[float, ...], sources: list[float]) -> bool:
    return any(
        math.isclose(value, source, rel_tol=0.01, abs_tol=0.06)
        for value in figure
        for source in sources
    )


def wrong_kind(record: dict[str, Any], question_text: str, needed: Iterable[str]) -> str:
    called = set(record.get("called") or [])
    if not called and not record.get("tool_calls"):
        return "no tool"
    if called and not set(needed) <= called:
        return "wrong tool"
    results = record.get("results")
    if results is not None:
        sources = numbers_in(question_text) + [n for r in results for n in numbers_in(str(r))]
        if any(not _grounded(f, sources) for f in figures_in(str(record.get("answer") or ""))):
            return "invented"
    return "wrong number"


# --- one run ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sampling:
    temperature: float | None
    seed: int | None
    max_tokens: int | None = None

    def describe(self) -> str:
        cap = f", max_tokens {self.max_tokens}" if self.max_tokens else ""
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


def run_toolcall(
    system: str,
    question: str,
    args: argparse.Namespace,
    sampling: Sampling,
    home: Path,
    now: str | None = None,
) -> dict[str, Any]:
    flags = SYSTEMS[system]
    assert flags is not None
    command = [
        *toolcall_command(),
        "run",
        "--base-url",
        args.base_url,
        "--model",
        args.model,
        *flags,
        "--tools",
        str(BENCH_TOOLS),
        "--json",
        "--yes",
    ]
    if args.max_iterations:
        command += ["--max-iterations", str(args.max_iterations)]
    if sampling.temperature is not None:
        command += ["--temperature", str(sampling.temperature)]
    if sampling.seed is not None:
        command += ["--seed", str(sampling.seed)]
    if sampling.max_tokens is not None:
        command += ["--max-tokens", str(sampling.max_tokens)]
    command.append(question)
    # An empty config home: a user's own tools.d or profiles must not change what is measured.
    env = {**os.environ, "XDG_CONFIG_HOME": str(home), "HOME": str(home), "NO_COLOR": "1"}
    if now:
        env[NOW_VARIABLE] = now
    started = time.monotonic()
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=args.timeout,
            cwd=ROOT,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired as expired:
        out = expired.stdout.decode() if isinstance(expired.stdout, bytes) else expired.stdout
        record = summarise_events(out or "")
        return {**record, "exit": None, "timeout": True, "wall": time.monotonic() - started}
    record = summarise_events(done.stdout)
    error = [line for line in done.stderr.splitlines() if line.startswith("toolcall:")]
    return {
        **record,
        "exit": done.returncode,
        "timeout": False,
        "wall": time.monotonic() - started,
        "error": error[-1] if error else "",
    }


def summarise_events(stdout: str) -> dict[str, Any]:
    """What the record keeps of a `--json` event stream."""
    answer: str | None = None
    best_effort = False
    stop, iterations, calls, tokens = "", 0, 0, 0
    replies: list[str] = []
    notices: list[str] = []
    names: list[str] = []
    results: list[str] = []
    calls_per_reply: Counter[int] = Counter()
    iteration = 0
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        kind = event.get("kind")
        if kind == "iteration_started":
            iteration = event["iteration"]
        elif kind == "model_replied":
            replies.append(str(event.get("raw", ""))[:400])
            tokens += int((event.get("usage") or {}).get("total_tokens", 0))
        elif kind == "tool_call_parsed":
            calls_per_reply[iteration] += 1
            names.append(str(event["call"].get("name")))
        elif kind == "tool_finished":
            results.append(str((event.get("result") or {}).get("content", ""))[:400])
        elif kind == "final_answer":
            answer, best_effort = event.get("text", ""), bool(event.get("best_effort"))
        elif kind in ("notice", "answer_without_tools", "limit_reached", "model_failed"):
            notices.append(f"{kind}: {str(event.get('message', ''))[:200]}")
        elif kind == "run_finished":
            stop = event.get("stop_reason", "")
            iterations = int(event.get("iterations", 0))
            calls = int(event.get("tool_calls", 0))
            total = (event.get("usage") or {}).get("total_tokens")
            tokens = int(total) if total is not None else tokens
    return {
        "answer": answer,
        "best_effort": best_effort,
        "stop_reason": stop,
        "iterations": iterations or len(replies),
        "tool_calls": calls,
        "tokens": tokens,
        "replies": replies,
        "notices": notices,
        "called": names,
        "results": results,
        "max_calls_in_reply": max(calls_per_reply.values(), default=0),
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
            written = threading.Lock()

            def measure(number: int, seed: int, sampling: Sampling, question: dict[str, Any],
                        system: str) -> None:  # fmt: skip
                load = os.getloadavg()[0]
                peer = PEERS.get(system)
                if peer is not None and peer.temperature is not None:
                    sampling = dataclasses.replace(sampling, temperature=peer.temperature)
                if system in PEERS:
                    record = run_peer(system, question["question"], args, sampling, now)
                else:
                    record = run_toolcall(
                        system, question["question"], args, sampling, Path(home), now
                    )
                record.update(
                    {
                        "pass": number,
                        "seed": seed,
                        "sampling": sampling.describe(),
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
