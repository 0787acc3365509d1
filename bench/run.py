"""Every figure side by side in one run on this machine: writes bench/RESULTS.md.

    python bench/run.py                 # the full run (a few minutes)
    python bench/run.py --quick         # fewer repeats and smaller cases: a fast check
    python bench/run.py --base-url http://127.0.0.1:8181/v1   # also the real-model comparison

Peers are real libraries in a venv of their own (bench/.venv-peers, or --peers-venv), made or
completed here when missing: partial-json-parser (vLLM's streaming method) and llm (simonw/llm,
for start-up). Ratios are what is targeted; each is measured side by side in this run, the two
sides taking turns, and the median of the repeats is reported, because other work shares this
machine. See bench/README.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path[:0] = [str(ROOT), str(BENCH)]

import bench_executor  # noqa: E402
import bench_retrieval  # noqa: E402
import bench_stream_parser as parser_bench  # noqa: E402

RESULTS = BENCH / "RESULTS.md"
REALMODEL_RECORDS = BENCH / "results" / "realmodel_runs.jsonl"
REALMODEL_DIR = BENCH / "results" / "heldout_eval"
REALMODEL_REPORT = REALMODEL_DIR / "heldout_eval.md"
REALMODEL_SYSTEMS = (  # every toolcall strategy; each peer at temperature 0 and at the server's
    "default,regex,schema,stream,smolagents-t0,pydanticai-t0,openai-agents-t0,langgraph-t0,"
    "smolagents,pydanticai,openai-agents,langgraph"
)
PEER_PACKAGES = ("partial-json-parser", "llm")
PEER_METHOD = BENCH / "peers" / "vllm_method.py"


@dataclass
class Figure:
    """One row of RESULTS.md."""

    name: str
    value: str
    target: str = "–"
    peer: str = "–"
    verdict: str = "–"  # PASS, SHORT, or – (reported, no target)
    why: str = ""


@dataclass
class Section:
    title: str
    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def verdict(ok: bool) -> str:
    return "PASS" if ok else "SHORT"


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


# --- the peers venv ------------------------------------------------------------------------------


def peer_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def ensure_peers(venv: Path, extra: Sequence[str] = ()) -> None:
    """Makes the venv, or installs what it lacks; says so in one line."""
    wanted = [*PEER_PACKAGES, *extra]
    python = peer_python(venv)
    if python.exists():
        probe = subprocess.run(
            [str(python), "-m", "pip", "show", "-q", *wanted], capture_output=True, check=False
        )
        if probe.returncode == 0:
            return
    print(f"run.py: setting up the peers venv {venv} ({', '.join(wanted)})", flush=True)
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", *wanted], check=True)


def peer_versions(venv: Path) -> str:
    code = (
        "import importlib.metadata as m; "
        f"print(', '.join(n + ' ' + m.version(n) for n in {list(PEER_PACKAGES)!r}))"
    )
    done = subprocess.run(
        [str(peer_python(venv)), "-c", code], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() or "?"


# --- streaming parse -----------------------------------------------------------------------------


def peer_parse(venv: Path, chunks: list[str]) -> dict[str, Any]:
    """vLLM's method over these chunks in the peers venv: seconds and calls found."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", encoding="utf-8", delete=False) as out:
        json.dump(chunks, out)
    try:
        done = subprocess.run(
            [str(peer_python(venv)), str(PEER_METHOD), out.name],
            capture_output=True,
            text=True,
            check=True,
        )
    finally:
        os.unlink(out.name)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def streaming_parse(venv: Path, quick: bool) -> Section:
    section = Section("Streaming parse")
    repeats = 3 if quick else 5
    sizes = {"20 KB": 20_000, "200 KB": 200_000}
    cuts = {"1-char": (1, 1), "3–8-char": (3, 8)}
    mine: dict[tuple[str, str], float] = {}
    peer: dict[str, float] = {}
    found: dict[str, str] = {}
    for size_label, size in sizes.items():
        text = parser_bench.model_output(size, close_tag_in_arguments=False)
        volume = len(text.encode())
        batch = parser_bench.parse_text(text)
        for cut_label, (lo, hi) in cuts.items():
            chunks = parser_bench.chunked(text, lo, hi)
            streamed = parser_bench.stream_parse_chunks(chunks)
            assert (streamed.calls, streamed.text) == (list(batch.calls), batch.text)
            run_peer = size_label == "20 KB"  # see the note: the peer is quadratic
            ours, theirs = [], []
            for _ in range(repeats):  # taking turns, so that a busy moment slows both
                ours.append(timed(lambda c=chunks: parser_bench.stream_parse_chunks(c)))
                if run_peer:
                    result = peer_parse(venv, chunks)
                    theirs.append(result["seconds"])
                    found[cut_label] = f"{result['named']} of {len(batch.calls)}"
            mine[size_label, cut_label] = median(ours)
            speed = volume / mine[size_label, cut_label] / 1e6
            peer_text = "not measured (see the note)"
            if run_peer:
                peer[cut_label] = median(theirs)
                peer_text = f"{volume / peer[cut_label] / 1e6:.3f} MB/s ({ms(peer[cut_label])})"
            section.figures.append(
                Figure(
                    f"throughput, {size_label}, {cut_label} chunks",
                    f"{speed:.2f} MB/s ({ms(mine[size_label, cut_label])})",
                    peer=peer_text,
                )
            )
    for cut_label in cuts:
        ratio = peer[cut_label] / mine["20 KB", cut_label]
        one_char = cut_label == "1-char"
        target = "≥ 100×" if one_char else "> 1× (ahead)"
        ok = ratio >= 100 if one_char else ratio > 1
        section.figures.append(
            Figure(
                f"speed-up over the peer, 20 KB, {cut_label} chunks",
                f"{ratio:.0f}×",
                target,
                "1×",
                verdict(ok),
                "" if ok else "the peer re-parses only the open call's text; see the note",
            )
        )
    for cut_label in cuts:
        growth = mine["200 KB", cut_label] / mine["20 KB", cut_label]
        section.figures.append(
            Figure(
                f"growth 20 KB → 200 KB (10× the bytes), {cut_label} chunks",
                f"{growth:.2f}×",
                "≤ 12×",
                verdict=verdict(growth <= 12),
                why="" if growth <= 12 else "timing noise or a superlinear step; rerun idle",
            )
        )
    # Today's naive re-parse: the whole buffer through parse_text on every chunk.
    small = parser_bench.model_output(sizes["20 KB"], close_tag_in_arguments=False)
    naive_chunks = parser_bench.chunked(small, 3, 8) if quick else list(small)
    naive_label = "3–8-char" if quick else "1-char"
    naive = timed(lambda: parser_bench.naive_parse_chunks(naive_chunks))
    section.figures.append(
        Figure(
            f"naive re-parse (parse_text over the whole buffer per chunk), 20 KB, {naive_label}",
            f"{naive:.2f} s, {naive / mine['20 KB', naive_label]:.0f}× slower than CallTextParser",
            peer=f"{peer[naive_label]:.2f} s (the peer)",
        )
    )
    section.notes += [
        "Both parsers get the same text: the generated reply of bench_stream_parser.py, with its "
        "arguments' literal `</tool_call>` written `</tool-call>`. The peer counts tags, so a "
        "closing tag inside a string would end its first call early and it would parse nothing "
        "after it (1 call of 16): that would flatter its time. CallTextParser's result equals "
        "the batch parse at every size and chunking (checked each run).",
        f"Calls the peer found at 20 KB: {', '.join(f'{v} ({k})' for k, v in found.items())}: "
        "it knows only `<tool_call>` tags, so a call in a ```json fence is text to it.",
        "The peer at 200 KB is not measured: each delta counts the tags in, and splits, the "
        "whole text so far, so its time grows with the square of the reply (about 100× the "
        "20 KB time: minutes).",
        f"Median of {repeats} runs each, toolcall and the peer taking turns. The peer runs in "
        "its own interpreter; only its parse is timed.",
    ]
    return section


# --- the loop: first tool start, overhead per iteration ------------------------------------------


def first_tool_start(quick: bool) -> Section:
    """From the first call's closing tag leaving the model to its ToolStarted, per strategy."""
    from toolcall_cli.events import ToolStarted
    from toolcall_cli.loop import Limits, run
    from toolcall_cli.models.paced import PacedModel
    from toolcall_cli.offline import OfflineModel
    from toolcall_cli.strategies import get_strategy
    from toolcall_cli.tools.loader import bundled_tools_dir, load_tools

    section = Section("First tool start (offline model streaming at a fixed rate)")
    delay = 0.002
    question = "What is the weather in Beijing, Shanghai, Tokyo and Paris today?"
    registry = load_tools([bundled_tools_dir()]).registry
    repeats = 3 if quick else 7
    waits: list[float] = []
    replies: list[float] = []
    rest: list[float] = []

    class Watched:
        """The paced offline model, noting when the first closing tag reached the loop."""

        def __init__(self, marks: dict[str, float]) -> None:
            self.inner = PacedModel(OfflineModel(), delay)
            self.name = self.inner.name
            self.marks = marks
            self.sent = ""

        def stream(self, request: Any) -> Any:
            self.marks.setdefault("began", time.perf_counter())
            for chunk in self.inner.stream(request):
                delta = (chunk.get("choices") or [{}])[0].get("delta") or {}
                self.sent += delta.get("content") or ""
                # Noted as the chunk that completes the first call leaves the model.
                if "closed" not in self.marks and "</tool_call>" in self.sent:
                    self.marks["closed"] = time.perf_counter()
                yield chunk
            self.marks.setdefault("ended", time.perf_counter())

        def context_window(self) -> Any:
            return self.inner.context_window()

    for _ in range(repeats):
        marks: dict[str, float] = {}
        for event in run(
            question,
            model=Watched(marks),  # type: ignore[arg-type]
            strategy=get_strategy("stream"),
            registry=registry,
            history=[],
            limits=Limits(max_iterations=3),
        ):
            if isinstance(event, ToolStarted):
                marks.setdefault("started", time.perf_counter())
        waits.append(marks["started"] - marks["closed"])
        replies.append(marks["ended"] - marks["began"])
        rest.append(marks["ended"] - marks["closed"])
    wait = median(waits)
    section.figures += [
        Figure(
            "first call's closing tag → its tool starting, stream strategy",
            ms(wait),
            "≤ 5 ms",
            peer=f"{ms(median(replies))} (batch: the whole reply)",
            verdict=verdict(wait <= 0.005),
            why="" if wait <= 0.005 else "see the note",
        ),
        Figure("reply still streaming after the first call closed", ms(median(rest))),
    ]
    section.notes += [
        f"The offline model answers {question!r} with four calls in one reply, one chunk every "
        f"{delay * 1000:g} ms (PacedModel). The wait runs from the chunk that completes the "
        "first call leaving the model to the loop's ToolStarted for it (the call handed to the "
        "pool), while later chunks are still coming: about "
        f"{ms(median(rest))} of reply remained after the first call. Median of {repeats} runs.",
        "The batch strategies (regex, schema) start no tool before the whole reply is in: "
        "the peer column is that reply's streaming time at the same rate, the least they wait.",
    ]
    return section


def engine_overhead(quick: bool) -> tuple[Section, float]:
    """Seconds per iteration that are neither the model's nor the tools'."""
    from toolcall_cli.events import ModelReplied, RunFinished, ToolFinished
    from toolcall_cli.loop import Limits, run
    from toolcall_cli.offline import OfflineModel
    from toolcall_cli.strategies import get_strategy
    from toolcall_cli.tools.loader import bundled_tools_dir, load_tools

    registry = load_tools([bundled_tools_dir()]).registry
    questions = [
        "What is 123 * 47 + 19?",
        "What is the weather in Paris today?",
        "Convert 26 miles to kilometers.",
        "北京今天气温多少度？",
    ]
    rounds = 3 if quick else 10
    per_iteration: dict[str, list[float]] = {"regex": [], "schema": []}
    for _ in range(rounds):
        for name in per_iteration:
            for question in questions:
                started = time.perf_counter()
                model_time = tool_time = 0.0
                iterations = 0
                for event in run(
                    question,
                    model=OfflineModel(),
                    strategy=get_strategy(name),
                    registry=registry,
                    history=[],
                    limits=Limits(),
                ):
                    if isinstance(event, ModelReplied):
                        model_time += event.latency
                    elif isinstance(event, ToolFinished):
                        tool_time += (event.ended or 0.0) - (event.started or 0.0)
                    elif isinstance(event, RunFinished):
                        iterations = event.iterations
                wall = time.perf_counter() - started
                per_iteration[name].append((wall - model_time - tool_time) / max(iterations, 1))
    typical = typical_model_call()
    section = Section("Engine overhead per iteration (offline model, tools excluded)")
    worst = 0.0
    for name, values in per_iteration.items():
        value = median(values)
        worst = max(worst, value)
        share = value / typical if typical else float("nan")
        ok = value <= 0.001 and share <= 0.01
        section.figures.append(
            Figure(
                f"{name} strategy",
                f"{ms(value)} ({share:.2%} of a typical call)",
                "≤ 1 ms and ≤ 1%",
                verdict=verdict(ok),
                why="" if ok else "see the note",
            )
        )
    section.notes += [
        "Per run: wall time minus the model's reply latency (the offline model's own work) "
        "minus the tools' time, over the run's iterations; the median over "
        f"{rounds} rounds of {len(questions)} questions per strategy, the strategies taking "
        "turns. It includes building each request, parsing, checks, events and history. The "
        "stream strategy is left out: its tools run while the reply streams, so the model's "
        "and the tools' times overlap and cannot both be taken away.",
        f"A typical model call: {typical:.2f} s, the median of wall time / iterations over the "
        f"toolcall runs in {REALMODEL_RECORDS.relative_to(ROOT)} (Qwen2.5-0.5B on llama-server, "
        "this machine, two runs sharing the server).",
    ]
    return section, worst


# realmodel_eval.py's peers (each also as NAME-t0): their runs are not toolcall's model calls.
PEER_SYSTEMS = ("smolagents", "pydanticai", "openai-agents", "langgraph")


def typical_model_call() -> float:
    records = [json.loads(line) for line in REALMODEL_RECORDS.read_text().splitlines() if line]
    per_call = [
        r["wall"] / r["iterations"]
        for r in records
        if r["system"].removesuffix("-t0") not in PEER_SYSTEMS
        and r.get("iterations")
        and r.get("wall")
    ]
    return median(per_call) if per_call else 0.0


# --- parallel and DAG walls ----------------------------------------------------------------------


def walls(quick: bool) -> Section:
    section = Section("Parallel and DAG walls (bench_executor.py)")
    with tempfile.TemporaryDirectory() as tmp:
        tools_dir = Path(tmp)
        (tools_dir / "bench_tools.py").write_text(bench_executor.PLUGIN, encoding="utf-8")
        eight = bench_executor.independent(tools_dir, 8).seconds
        shape = bench_executor.diamond(tools_dir).seconds
        calls = 5 if quick else 20
        threads = bench_executor.per_call_overhead(tools_dir, isolate=False, calls=calls)
        processes = bench_executor.per_call_overhead(tools_dir, isolate=True, calls=calls)
    section.figures += [
        Figure(
            "8 independent 0.5 s tools, --max-parallel 8",
            f"{eight:.3f} s",
            "≤ 0.7 s",
            verdict=verdict(eight <= 0.7),
        ),
        Figure(
            "diamond of 0.5 s tools, --dag (critical path 1.5 s)",
            f"{shape:.3f} s",
            "≈ 1.5 s (≤ 1.7 s)",
            verdict=verdict(shape <= 1.7),
        ),
        Figure("a trivial tool in a thread, per call (median)", ms(median(threads))),
        Figure(
            "the same in a worker process (--isolate-tools), per call (median)",
            ms(median(processes)),
        ),
    ]
    section.notes.append(
        f"Through the real loop (a scripted reply, tools loaded from a tools.d); {calls} calls "
        "one at a time for the per-call figures. A worker process is a fresh interpreter that "
        "imports toolcall and the plugin, hence its cost."
    )
    return section


# --- start-up ------------------------------------------------------------------------------------


def startup(venv: Path, quick: bool) -> Section:
    toolcall = Path(sys.executable).with_name("toolcall")
    llm = venv / "bin" / "llm"
    repeats = 5 if quick else 15
    with tempfile.TemporaryDirectory() as home:
        env = {
            **os.environ,
            "XDG_CONFIG_HOME": home,
            "XDG_STATE_HOME": home,
            "XDG_DATA_HOME": home,
            "LLM_USER_PATH": home,
            "NO_COLOR": "1",
        }
        # As installed: pip compiles the modules at install time, so a user's commands never
        # recompile them. A shell that sets PYTHONDONTWRITEBYTECODE (this workplace's does)
        # would make every start compile toolcall afresh, which no user pays.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        commands = {
            "toolcall --help": [str(toolcall), "--help"],
            "llm --help": [str(llm), "--help"],
            "toolcall run": [str(toolcall), "run", "What is 12*7?", "--no-trace", "--quiet"],
        }
        times: dict[str, list[float]] = {label: [] for label in commands}
        for argv in commands.values():  # once untimed: the bytecode is written
            subprocess.run(argv, env=env, capture_output=True, check=True)
        for _ in range(repeats):  # taking turns
            for label, argv in commands.items():
                started = time.perf_counter()
                subprocess.run(argv, env=env, capture_output=True, check=True)
                times[label].append(time.perf_counter() - started)
    help_time, llm_time, run_time = (median(times[label]) for label in commands)
    section = Section("Start-up (a fresh interpreter each time)")
    section.figures += [
        Figure(
            "`toolcall --help`",
            ms(help_time),
            "≤ 0.4× `llm --help`",
            f"{ms(llm_time)}",
            verdict(help_time <= 0.4 * llm_time),
            f"{help_time / llm_time:.2f}×" if help_time > 0.4 * llm_time else "",
        ),
        Figure(
            "`toolcall run` (offline, --no-trace), end to end",
            ms(run_time),
            "≤ 2× `toolcall --help`",
            verdict=verdict(run_time <= 2 * help_time),
            why="" if run_time <= 2 * help_time else f"{run_time / help_time:.2f}×: see the note",
        ),
    ]
    section.notes.append(
        f"Median of {repeats} of each, the three commands taking turns; `toolcall run` answers "
        "'What is 12*7?' with the offline model (one calculate call). Config, state and llm's "
        "user directory point at an empty temporary directory. `--help` imports only the "
        "command line (tests/test_startup.py holds it to that); a run must also import the "
        "loop, a strategy, the offline model and the bundled tools, and load the tools. Each "
        "command runs once untimed first, with PYTHONDONTWRITEBYTECODE unset, so the modules' "
        "bytecode exists as after `pip install`."
    )
    return section


# --- retrieval -----------------------------------------------------------------------------------


def retrieval(embed_url: str | None, embed_model: str) -> Section:
    specs = bench_retrieval.catalogue_specs()
    asked = bench_retrieval.questions(bench_retrieval.CATALOGUE / "questions.toml")
    rankers: list[Any] = [bench_retrieval.LEXICAL]
    if embed_url:
        from toolcall_cli.models.embeddings import EmbeddingClient
        from toolcall_cli.tools.retrieval import EmbedRanker

        client = EmbeddingClient(url=embed_url, model=embed_model, timeout=300)
        rankers.append(EmbedRanker(client, embed_model))
    section = Section("Retrieval recall (bench_retrieval.py)")
    for ranker in rankers:
        result = bench_retrieval.measure(ranker, specs, asked)
        recall = result["recall"]["all"]
        lexical = ranker is bench_retrieval.LEXICAL
        section.figures.append(
            Figure(
                f"{result['ranker']} recall@3 / @5 / @10",
                f"{recall['@3']:.3f} / {recall['@5']:.3f} / {recall['@10']:.3f}",
                "@5 ≥ 0.95" if lexical else "–",
                verdict=verdict(recall["@5"] >= 0.95) if lexical else "–",
                why="" if not lexical or recall["@5"] >= 0.95 else recall_short(result),
            )
        )
    section.notes.append(
        f"{len(specs)} tools (examples/catalogue and the bundled tools), {len(asked)} questions."
        + ("" if embed_url else " The embed ranker needs --embed-url; not measured.")
    )
    return section


def recall_short(result: dict[str, Any]) -> str:
    held_out = result["recall"].get("held-out", {}).get("@5")
    return (
        "the misses need meaning, not shared words"
        + (f" (held-out half {held_out:.3f} at 5)" if held_out is not None else "")
        + "; each is in bench/results/retrieval_recall.md"
    )


# --- memory --------------------------------------------------------------------------------------


def memory_probe(which: str) -> None:
    """In a child process: do one thing, print the peak RSS before and after, in KB."""
    from toolcall_cli.loop import Limits, run
    from toolcall_cli.models.scripted import ScriptedModel
    from toolcall_cli.offline import OfflineModel
    from toolcall_cli.strategies import get_strategy
    from toolcall_cli.tools.loader import bundled_tools_dir, load_tools

    registry = load_tools([bundled_tools_dir()]).registry
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if which == "stream200":
        reply = parser_bench.model_output(200_000)
        model: Any = ScriptedModel([reply, "done"])
        for _ in run(
            "write the notes",
            model=model,
            strategy=get_strategy("stream"),
            registry=registry,
            history=[],
            limits=Limits(max_iterations=2),
        ):
            pass
    else:
        history: list[Any] = []
        questions = ["What is 123 * 47 + 19?", "What is the weather in Paris today?"]
        for n in range(100):
            for _ in run(
                questions[n % 2],
                model=OfflineModel(),
                strategy=get_strategy("regex"),
                registry=registry,
                history=history,
                limits=Limits(),
            ):
                pass
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"before": before, "after": after}))


def memory() -> Section:
    section = Section("Memory (peak RSS of a child process)")
    for which, label in (
        ("stream200", "a 200 KB reply streamed through the loop (stream strategy)"),
        ("chat100", "a 100-question chat (offline model, one history)"),
    ):
        done = subprocess.run(
            [sys.executable, __file__, "--memory-probe", which],
            capture_output=True,
            text=True,
            check=True,
        )
        rss = json.loads(done.stdout.splitlines()[-1])
        section.figures.append(
            Figure(
                label,
                f"{rss['after'] / 1024:.1f} MB (imports alone: {rss['before'] / 1024:.1f} MB)",
            )
        )
    section.notes.append("resource.getrusage(RUSAGE_SELF).ru_maxrss in a fresh interpreter.")
    return section


# --- real model ----------------------------------------------------------------------------------


def real_model(base_url: str | None, model: str, questions: int) -> Section:
    """Every toolcall strategy beside the peers, the held-out half first (the headline), then
    the tuning half. With a server, its first `questions` held-out questions are asked again
    (in turn by category); the whole half takes hours on a 2-core machine, so it is usually
    read from its report."""
    section = Section(
        "Real model: every strategy beside agent frameworks, held-out and tuning halves"
    )
    if base_url:
        import realmodel_eval

        split = json.loads((BENCH / "eval" / "split.json").read_text(encoding="utf-8"))
        chosen = ",".join(split["halves"]["held-out"][:questions])
        realmodel_eval.main(
            [
                *("--base-url", base_url, "--model", model, "--questions", chosen),
                *("--half", "held-out", "--passes", "1", "--seeds", "11"),
                *("--systems", REALMODEL_SYSTEMS, "--resume"),
                *("--records", str(REALMODEL_DIR / "heldout_eval_runs.jsonl")),
                *("--report", str(REALMODEL_REPORT), "--notes", str(REALMODEL_DIR / "notes.md")),
            ]
        )
        section.notes.append(f"Measured in this run against {base_url}.")
    else:
        section.notes.append(
            "Not re-measured in this run (no --base-url): the last recorded comparison follows, "
            f"from {REALMODEL_REPORT.relative_to(ROOT)} (written by bench/realmodel_eval.py "
            "through `toolcall eval`; the per-question grid, how the runs ended and the notes "
            "are there)."
        )
    report = REALMODEL_REPORT.read_text(encoding="utf-8")
    date = next((line for line in report.splitlines() if line.startswith("- date:")), "- date: ?")
    table = report.split("## Per system", 1)[1].split("## Per question", 1)[0].strip()
    section.notes += [f"Recorded {date.removeprefix('- date: ')}.", table]
    if "\n## Notes\n" in report:  # what ran, what changed, the targets judged
        notes = report.split("\n## Notes\n", 1)[1].split("\n## ", 1)[0].strip()
        section.notes += ["#### Notes (from the report)", notes]
    return section


# --- the report ----------------------------------------------------------------------------------


def render(sections: list[Section], meta: dict[str, str]) -> str:
    lines = ["# Benchmarks: every figure, one run", ""]
    lines += [f"- {key}: {value}" for key, value in meta.items()]
    lines += [
        "",
        "Written by `python bench/run.py` (see bench/README.md). Targets are ratios measured "
        "side by side in this run: the two sides take turns and each figure is the median of "
        "several repeats, because this 2-core machine is shared with other work. Absolute "
        "speeds are reported, not targeted. SHORT says why.",
    ]
    for section in sections:
        lines += ["", f"## {section.title}", ""]
        if section.figures:
            lines += ["| figure | toolcall | target | peer | result |", "|---|---|---|---|---|"]
            for f in section.figures:
                result = f.verdict + (f": {f.why}" if f.why else "")
                lines.append(f"| {f.name} | {f.value} | {f.target} | {f.peer} | {result} |")
            lines.append("")
        for note in section.notes:
            lines += [note, ""]
    return "\n".join(lines).rstrip() + "\n"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer repeats: a fast check")
    parser.add_argument("--peers-venv", type=Path, default=BENCH / ".venv-peers")
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--base-url", help="a real model's server, for the real-model table")
    parser.add_argument("--model", default="qwen", help="the model name sent to that server")
    parser.add_argument(
        "--questions", type=int, default=44, help="held-out questions asked again (of 44)"
    )
    parser.add_argument("--embed-url", help="an embeddings server, for the embed ranker")
    parser.add_argument("--embed-model", default="embed")
    parser.add_argument("--memory-probe", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.memory_probe:
        memory_probe(args.memory_probe)
        return 0
    started = time.perf_counter()
    venv = args.peers_venv.resolve()
    ensure_peers(venv, ("smolagents", "openai") if args.base_url else ())
    steps: list[Callable[[], Section]] = [
        lambda: streaming_parse(venv, args.quick),
        lambda: first_tool_start(args.quick),
        lambda: engine_overhead(args.quick)[0],
        lambda: walls(args.quick),
        lambda: startup(venv, args.quick),
        lambda: retrieval(args.embed_url, args.embed_model),
        memory,
        lambda: real_model(args.base_url, args.model, args.questions),
    ]
    sections = []
    for step in steps:
        section = step()
        print(f"run.py: {section.title} done ({time.perf_counter() - started:.0f} s)", flush=True)
        sections.append(section)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "toolcall commit": commit or "?",
        "machine": f"python {platform.python_version()} on {platform.platform()}, "
        f"{os.cpu_count()} CPUs (this process may use {len(os.sched_getaffinity(0))})",
        "peers": peer_versions(venv) + f" in {venv.name}",
        "mode": "--quick (fewer repeats, smaller cases)" if args.quick else "full",
        "whole run": f"{time.perf_counter() - started:.0f} s",
    }
    report = render(sections, meta)
    args.output.write_text(report, encoding="utf-8")
    print(report)
    print(f"run.py: wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
