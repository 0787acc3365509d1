"""ToolPool: the one executor. Its bound holds, wait() blocks on results (not on the clock),
timeouts are read from its injected clock, and cancel() answers every call it stops."""

from __future__ import annotations

import threading

from toolcall_cli.feedback import Problem, error_text
from toolcall_cli.messages import ToolCall
from toolcall_cli.tools.pool import Finished, Job, ToolPool
from toolcall_cli.tools.registry import Tool, tool

MEET = 5.0
"""A bound on waits for other threads: the test fails at it, it never hangs."""


class Frozen:
    """A clock that never moves unless told to, counting how often it is read."""

    def __init__(self) -> None:
        self.now = 0.0
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return self.now


class Gates:
    """A tool whose calls each wait for their own gate, recording who is running."""

    def __init__(self, concurrency: int | None = None) -> None:
        self.gates: dict[str, threading.Event] = {}
        self.entered: dict[str, threading.Event] = {}
        self.lock = threading.Lock()
        self.running = 0
        self.most = 0

        @tool(concurrency=concurrency)
        def gated(key: str) -> str:
            """Waits for its gate."""
            with self.lock:
                self.running += 1
                self.most = max(self.most, self.running)
            self.entered[key].set()
            self.gates[key].wait(MEET)
            with self.lock:
                self.running -= 1
            return f"done {key}"

        self.tool = Tool.from_function(gated)

    def job(self, key: str, timeout: float = 60.0) -> Job:
        self.gates[key] = threading.Event()
        self.entered[key] = threading.Event()
        call = ToolCall(id=key, name="gated", arguments={"key": key})
        return Job(call, self.tool, {"key": key}, timeout)


def started(pool: ToolPool) -> list[str]:
    return sorted(call.id for call in pool.running())


def test_never_more_than_max_parallel_run_and_a_finished_call_lets_the_next_start() -> None:
    gates = Gates()
    pool = ToolPool(max_parallel=2, clock=Frozen())
    for key in "abcd":
        pool.submit(gates.job(key))
    assert started(pool) == ["a", "b"] and pool.pending == 4
    assert gates.entered["a"].wait(MEET) and gates.entered["b"].wait(MEET)
    gates.gates["b"].set()
    done = pool.wait()
    assert isinstance(done, Finished) and done.result.content == "done b"
    assert started(pool) == ["a", "c"]
    for key in "acd":
        gates.gates[key].set()
    rest = [pool.wait() for _ in range(3)]
    assert sorted(f.call.id for f in rest if f) == ["a", "c", "d"]
    assert gates.most == 2 and pool.pending == 0
    assert pool.wait() is None  # nothing pending: no wait at all


def test_a_tools_concurrency_limit_holds_while_other_tools_use_the_pool() -> None:
    limited = Gates(concurrency=1)
    pool = ToolPool(max_parallel=4, clock=Frozen())
    for key in "abc":
        pool.submit(limited.job(key))
    assert started(pool) == ["a"] and pool.pending == 3
    limited.gates["a"].set()
    assert pool.wait() is not None and started(pool) == ["b"]
    limited.gates["b"].set()
    limited.gates["c"].set()
    assert pool.wait() is not None and pool.wait() is not None
    assert limited.most == 1


def test_wait_returns_when_a_call_finishes_without_polling_the_clock() -> None:
    """The clock never moves: a wait that measured its own progress by it would never end, and
    one that polled would read it again and again. Released by another thread meanwhile."""
    gates = Gates()
    clock = Frozen()
    pool = ToolPool(max_parallel=1, clock=clock)
    pool.submit(gates.job("a"))
    assert gates.entered["a"].wait(MEET)
    reads = clock.reads
    threading.Timer(0.3, gates.gates["a"].set).start()
    done = pool.wait()
    assert done is not None and done.result.content == "done a"
    assert clock.reads - reads <= 4  # a 50 ms poll would have read it a dozen times


def test_a_timeout_is_read_from_the_injected_clock() -> None:
    gates = Gates()
    clock = Frozen()
    pool = ToolPool(max_parallel=1, clock=clock)
    pool.submit(gates.job("a", timeout=30))
    pool.submit(gates.job("b", timeout=30))
    assert pool.wait(timeout=0) is None  # not yet: no time has passed
    clock.now += 31
    expired = pool.wait(timeout=0)
    assert expired is not None and expired.result.error_kind == "timeout"
    assert "`gated` timed out after 30 s" in expired.result.content
    assert (expired.started, expired.ended) == (0.0, 31.0)
    assert started(pool) == ["b"]  # its slot went to the next call
    gates.gates["a"].set()  # the abandoned thread's late result is dropped
    gates.gates["b"].set()
    late = pool.wait()
    assert late is not None and late.call.id == "b" and late.result.ok
    assert pool.pending == 0


def test_cancel_answers_running_and_waiting_calls_with_the_reason() -> None:
    gates = Gates()
    pool = ToolPool(max_parallel=1, clock=Frozen())
    pool.submit(gates.job("a"))
    pool.submit(gates.job("b"))
    assert gates.entered["a"].wait(MEET)
    stopped = pool.cancel(Problem("cancelled"))
    assert sorted(f.call.id for f in stopped) == ["a", "b"]
    for finished in stopped:
        assert finished.result.error_kind == "cancelled"
        assert finished.result.content == error_text(Problem("cancelled"))
        assert finished.result.problems == (Problem("cancelled", tool="gated"),)
    assert pool.pending == 0 and pool.running() == []
    assert not gates.entered["b"].is_set()  # the waiting call never started
    gates.gates["a"].set()
    assert pool.wait(timeout=0) is None  # the abandoned call's late result is dropped
