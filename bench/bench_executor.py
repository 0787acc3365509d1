"""Benchmark: the execution engine's schedule, through toolcall's real loop, against its targets.

Run from the repo root: `.venv/bin/python bench/bench_executor.py`. Results are printed and
written to bench/results/executor.txt. Timing is never asserted in tests; this is the check.

Each case is one reply of a scripted model (the text protocol, as the offline model writes it)
whose calls go to plugin tools loaded from a temporary tools.d, exactly as a user's would:
`loop.run` parses the reply, the round schedules the calls over the pool, the tools sleep. The
round's time is read from the ToolFinished offsets (seconds from the round's start to the last
result), so the model's own time is not counted.

- 8 independent 0.5 s calls with --max-parallel 8, 4 (the default) and 1.
- A diamond of 0.5 s calls with --dag: a; b and c wait for a; d waits for b and c.
- The same trivial tool run N times as a thread and in a worker process (--isolate-tools).
"""

from __future__ import annotations

import json
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from toolcall_cli.events import ToolFinished  # noqa: E402
from toolcall_cli.loop import Limits, run  # noqa: E402
from toolcall_cli.models.scripted import ScriptedModel  # noqa: E402
from toolcall_cli.rounds import ToolPolicy  # noqa: E402
from toolcall_cli.strategies import get_strategy  # noqa: E402
from toolcall_cli.tools.loader import load_tools  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "executor.txt"
NAP = 0.5
TARGET_PARALLEL_8 = 0.7
TARGET_DIAMOND = 1.7
OVERHEAD_CALLS = 50

PLUGIN = f'''
import time

from toolcall_cli import tool


@tool(timeout=30)
def nap(n: int) -> int:
    """Sleep {NAP} s, then give n back."""
    time.sleep({NAP})
    return n


@tool(timeout=30)
def echo(n: int) -> int:
    """Give n back at once."""
    return n
'''


@dataclass(frozen=True)
class Round:
    """One reply's calls as the loop ran them."""

    seconds: float
    """From the round's start to its last result."""
    finished: tuple[ToolFinished, ...]

    def calls(self) -> list[tuple[str, float, float]]:
        """(ref or id, started, ended) of each call."""
        return [(f.call.ref or f.call.id, f.started or 0.0, f.ended or 0.0) for f in self.finished]


def call_text(name: str, n: int, ref: str | None = None, depends: list[str] | None = None) -> str:
    payload: dict[str, object] = {"name": name, "arguments": {"n": n}}
    if ref:
        payload = {"id": ref, **payload}
    if depends:
        payload["depends_on"] = depends
    return f"<tool_call>{json.dumps(payload)}</tool_call>"


def run_round(
    tools_dir: Path, reply: str, *, max_parallel: int, dag: bool = False, isolate: bool = False
) -> Round:
    """One question whose first reply is `reply` and whose second answers: the first round."""
    loaded = load_tools([tools_dir])
    assert not loaded.problems, loaded.problems
    model = ScriptedModel([reply, "done"])
    events = run(
        "bench",
        model=model,
        strategy=get_strategy("regex", dag=dag),
        registry=loaded.registry,
        history=[],
        # Past the default 8 calls a reply the rest would be refused, not run.
        limits=Limits(max_iterations=3, tool_timeout=30.0, max_calls_per_reply=64),
        policy=ToolPolicy(max_parallel=max_parallel, dag=dag, isolate_all=isolate),
    )
    finished = tuple(e for e in events if isinstance(e, ToolFinished))
    failed = [f.result.content for f in finished if not f.result.ok]
    assert not failed, failed
    return Round(max(f.ended or 0.0 for f in finished), finished)


def independent(tools_dir: Path, max_parallel: int) -> Round:
    reply = "\n".join(call_text("nap", n) for n in range(8))
    done = run_round(tools_dir, reply, max_parallel=max_parallel)
    assert len(done.finished) == 8
    return done


def diamond(tools_dir: Path) -> Round:
    reply = "\n".join(
        [
            call_text("nap", 1, "a"),
            call_text("nap", 2, "b", ["a"]),
            call_text("nap", 3, "c", ["a"]),
            call_text("nap", 4, "d", ["b", "c"]),
        ]
    )
    done = run_round(tools_dir, reply, max_parallel=4, dag=True)
    assert len(done.finished) == 4
    times = {ref: (start, end) for ref, start, end in done.calls()}
    # The schedule itself, whatever the machine: b and c after a, d after both.
    assert times["b"][0] >= times["a"][1] and times["c"][0] >= times["a"][1]
    assert times["d"][0] >= max(times["b"][1], times["c"][1])
    return done


def per_call_overhead(
    tools_dir: Path, *, isolate: bool, calls: int = OVERHEAD_CALLS
) -> list[float]:
    """Seconds from each trivial call's start to its result, one call at a time."""
    reply = "\n".join(call_text("echo", n) for n in range(calls))
    done = run_round(tools_dir, reply, max_parallel=1, isolate=isolate)
    assert len(done.finished) == calls
    return [end - start for _, start, end in done.calls()]


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def main() -> int:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        tools_dir = Path(tmp)
        (tools_dir / "bench_tools.py").write_text(PLUGIN, encoding="utf-8")
        parallel = {n: independent(tools_dir, n) for n in (8, 4, 1)}
        shape = diamond(tools_dir)
        threads = per_call_overhead(tools_dir, isolate=False)
        processes = per_call_overhead(tools_dir, isolate=True)
    thread_mean = statistics.mean(threads)
    process_mean = statistics.mean(processes)
    ok_8 = parallel[8].seconds <= TARGET_PARALLEL_8
    ok_diamond = shape.seconds <= TARGET_DIAMOND
    lines = [
        "toolcall execution engine benchmark (bench/bench_executor.py)",
        f"python {platform.python_version()} on {platform.platform()}",
        f"each nap tool call sleeps {NAP} s; times are one reply's round, from the round's "
        "start to its last result",
        "",
        "8 independent calls in one reply:",
        f"  --max-parallel 8: {parallel[8].seconds:.3f} s  "
        f"(target <= {TARGET_PARALLEL_8} s)  {verdict(ok_8)}",
        f"  --max-parallel 4 (default): {parallel[4].seconds:.3f} s  (about {2 * NAP:.1f} s)",
        f"  --max-parallel 1: {parallel[1].seconds:.3f} s  (about {8 * NAP:.1f} s)",
        "",
        "diamond with --dag (a; b, c wait for a; d waits for b and c):",
        f"  round: {shape.seconds:.3f} s  (critical path {3 * NAP:.1f} s, target <= "
        f"{TARGET_DIAMOND} s)  {verdict(ok_diamond)}",
        *(
            f"    {ref}: {start:.3f}-{end:.3f} s"
            for ref, start, end in sorted(shape.calls(), key=lambda c: c[1])
        ),
        "",
        f"per-call overhead of a trivial tool, {OVERHEAD_CALLS} calls one at a time "
        "(start to result; no target):",
        f"  thread:          mean {thread_mean * 1000:8.2f} ms, "
        f"median {statistics.median(threads) * 1000:8.2f} ms",
        f"  worker process:  mean {process_mean * 1000:8.2f} ms, "
        f"median {statistics.median(processes) * 1000:8.2f} ms",
        f"  ratio (process / thread, means): {process_mean / thread_mean:.0f}x",
        "",
        f"overall: {verdict(ok_8 and ok_diamond)}  ({time.perf_counter() - started:.1f} s)",
    ]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text, encoding="utf-8")
    return 0 if ok_8 and ok_diamond else 1


if __name__ == "__main__":
    raise SystemExit(main())
