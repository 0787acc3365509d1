"""A trace is anybody's file: shared, edited, cut short. Whatever it holds, every command that reads
one (`trace show`, `trace list`, `doctor`, `replay`, `--script`) ends with its result or with one
line naming the file and the line, exit 2; never an internal error, and never more memory than
the longest line a trace may have."""

from __future__ import annotations

import contextlib
import io
import json
import signal
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from in_process import Finished, toolcall

from toolcall_cli.trace import reader
from toolcall_cli.trace.files import trace_dir
from toolcall_cli.trace.reader import TraceError, lines_of, read_trace, summarize

MiB = 1 << 20

BUDGET = 120
"""Seconds any command may take on a corrupted trace (each takes well under one; a replay's run
is bounded by its --timeout 30): past it, the command is taken to hang."""


class TookTooLong(BaseException):
    """Not an Exception: the command's own handlers must not take it for an error of its own."""


@contextlib.contextmanager
def within(seconds: float) -> Iterator[None]:
    def stop(signum: int, frame: Any) -> None:
        raise TookTooLong(f"the command was still running after {seconds} s")

    before = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)


def recorded(tmp_path: Path, name: str, *args: str, stdin: str | None = None) -> Path:
    trace = tmp_path / f"{name}.jsonl"
    done = toolcall(*args, "--trace", str(trace), cwd=tmp_path, stdin=stdin)
    assert done.returncode == 0, done.stderr
    return trace


def one_line_error(done: Finished, *needles: str) -> None:
    """Exit 2 with one line on stderr, saying each of `needles`, and nothing on stdout."""
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("toolcall: error: ") and done.stderr.count("\n") == 1
    assert "internal error" not in done.stderr
    for needle in needles:
        assert needle in done.stderr, done.stderr


def edited(trace: Path, kind: str, change: Callable[[dict[str, Any]], None]) -> int:
    """The first `kind` record changed in place; its line number."""
    lines = trace.read_text(encoding="utf-8").splitlines()
    number = next(n for n, line in enumerate(lines) if json.loads(line)["kind"] == kind)
    record = json.loads(lines[number])
    change(record)
    lines[number] = json.dumps(record)
    trace.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return number + 1


# --- what the issue found ----------------------------------------------------------------------


def test_doctor_on_a_call_that_is_a_string_names_the_line(tmp_path: Path) -> None:
    trace = recorded(tmp_path, "t", "run", "What's 12*5+3?", "-q")
    line = edited(trace, "tool_call_parsed", lambda record: record.update(call="x"))
    for args in (["doctor", str(trace)], ["trace", "show", str(trace)]):
        one_line_error(
            toolcall(*args, cwd=tmp_path),
            f"{trace} is not a toolcall trace: line {line} is not a tool_call_parsed record: "
            "`call` must be an object, not a string",
        )


def test_a_script_with_a_null_request_names_the_line(tmp_path: Path) -> None:
    trace = recorded(tmp_path, "t", "run", "What's 12*5+3?", "-q")
    line = edited(trace, "iteration_started", lambda record: record.update(request=None))
    done = toolcall("run", "hi", "-m", "scripted", "--script", str(trace), cwd=tmp_path)
    one_line_error(done, f"line {line} is not a iteration_started record: `request` must be an")


def test_records_lacking_a_field_or_of_the_wrong_type_are_named(tmp_path: Path) -> None:
    trace = recorded(tmp_path, "t", "run", "What's 12*5+3?", "-q")
    line = edited(trace, "tool_finished", lambda record: record["result"].pop("content"))
    missing = rf"line {line} is not a tool_finished record: `result.content` is missing"
    with pytest.raises(TraceError, match=missing):
        read_trace(trace)
    edited(trace, "tool_finished", lambda record: record["result"].update(content="back"))
    line = edited(trace, "trace_header", lambda record: record["settings"].update(limits=[]))
    wrong = rf"line {line} is not a trace_header record: `settings.limits` must be an object, not"
    with pytest.raises(TraceError, match=wrong):
        read_trace(trace)


def test_numbers_json_cannot_hold_read_back_as_numbers(tmp_path: Path) -> None:
    trace = recorded(tmp_path, "t", "run", "What's 12*5+3?", "-q")
    edited(trace, "model_replied", lambda record: record.update(latency="NaN"))
    [replied] = [r for r in read_trace(trace).records if r["kind"] == "model_replied"][:1]
    assert replied["latency"] != replied["latency"]  # NaN, as it was before it was written


def test_an_iteration_out_of_order_is_refused_before_anything_counts_to_it(
    tmp_path: Path,
) -> None:
    # An iteration of 10**18 once made the replay's diff count every iteration up to it.
    trace = recorded(tmp_path, "t", "run", "What's 12*5+3?", "-q")
    line = edited(trace, "iteration_started", lambda record: record.update(iteration=10**18))
    for args in (["replay", str(trace)], ["doctor", str(trace)], ["trace", "show", str(trace)]):
        with within(BUDGET):
            done = toolcall(*args, cwd=tmp_path)
        one_line_error(
            done,
            f"line {line} is not a iteration_started record: its iteration 1000000000000000000 "
            "is out of order (after 0, iterations go up one at a time from 1)",
        )


def test_a_line_nested_deeper_than_toolcall_writes_is_one_line(tmp_path: Path) -> None:
    # Readers walk what they read (doctor reads every description in a tool's schema): nothing
    # deeper than the writer's bound reaches them.
    trace = recorded(tmp_path, "t", "run", "What's 12*5+3?", "-q")
    deep: Any = "x"
    for _ in range(300):
        deep = {"a": deep}
    line = edited(trace, "trace_header", lambda record: record["tools"][0].update(parameters=deep))
    one_line_error(
        toolcall("doctor", str(trace), cwd=tmp_path),
        f"line {line} is nested more deeply than toolcall writes",
    )


def test_a_number_too_long_for_python_is_one_line(tmp_path: Path) -> None:
    trace = recorded(tmp_path, "t", "run", "What's 12*5+3?", "-q")
    with trace.open("a", encoding="utf-8") as stream:
        stream.write('{"kind": "notice", "message": "x", "t": ' + "9" * 5000 + "}\n")
    for args in (["trace", "show", str(trace)], ["run", "hi", "-m", "scripted", "--script",
                                                 str(trace)]):  # fmt: skip
        one_line_error(toolcall(*args, cwd=tmp_path), "holds a number too long to read")


def test_times_of_any_size_are_drawn_on_the_timeline(tmp_path: Path) -> None:
    trace = recorded(tmp_path, "t", "run", "北京和上海今天天气怎么样？", "-q")

    def odd_times(record: dict[str, Any]) -> None:
        first, second = record["entries"][:2]
        first.update(started="NaN", ended=-1e300)  # as strictjson writes NaN
        second.update(started=-5.0, ended="Infinity")

    edited(trace, "tool_timeline", odd_times)
    done = toolcall("trace", "show", "--plain", str(trace), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    start = lines.index("timeline:")
    assert lines[start + 1].endswith(f"{-1e300:.2f}s ok") and "  nan-" in lines[start + 1]
    assert lines[start + 2].endswith("  -5.00-infs ok")


# --- bounded memory -----------------------------------------------------------------------------

CAP = MiB
LONG = 8 * MiB


def peak_of(work: Callable[[], Any]) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        result = work()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


def with_a_long_line(trace: Path, kind: str, *, ended: bool) -> None:
    """A last line of `kind`, LONG bytes, as a crash or an attacker might leave it."""
    head = json.dumps({"kind": kind, "iteration": 9, "delta": {"content": ""}})[:-3]
    with trace.open("a", encoding="utf-8") as stream:
        stream.write(head + "x" * LONG + '"}}' + ("\n" if ended else ""))


@pytest.mark.parametrize("ended", [True, False])
def test_a_line_over_the_cap_is_refused_without_being_held(tmp_path: Path, ended: bool) -> None:
    trace = recorded(tmp_path, "t", "run", "What's 12*5+3?", "-q")
    with_a_long_line(trace, "model_chunk", ended=ended)

    def refused() -> str:
        with pytest.raises(TraceError) as error:
            read_trace(trace, max_line_bytes=CAP)
        return str(error.value)

    message, peak = peak_of(refused)
    last = len(trace.read_bytes().splitlines())
    assert message == f"{trace} is not a toolcall trace: line {last} is longer than 1,048,576 bytes"
    assert peak < 3 * CAP, f"peak {peak:,} bytes"


def test_trace_list_reads_only_the_start_of_the_lines_it_does_not_need(tmp_path: Path) -> None:
    trace = recorded(tmp_path, "t", "run", "What's 12*5+3?", "-q")
    with_a_long_line(trace, "model_chunk", ended=True)
    summary, peak = peak_of(lambda: summarize(trace, max_line_bytes=64 * MiB))
    assert summary.question == "What's 12*5+3?" and summary.stop_reason == "answered"
    assert peak < CAP, f"peak {peak:,} bytes"


@pytest.mark.parametrize(
    "command",
    [
        ["trace", "show", "{trace}"],
        ["trace", "show", "--json", "{trace}"],
        ["doctor", "{trace}"],
        ["replay", "{trace}", "--no-trace"],
        ["run", "hi", "-m", "scripted", "--script", "{trace}", "--no-trace"],
    ],
)
def test_every_reader_refuses_a_long_last_line_in_bounded_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    trace = recorded(tmp_path, "t", "run", "What's 12*5+3?", "-q")
    # The command once on the sound trace first: the modules it imports are not what is
    # measured (they grow as the program does), the long line is.
    toolcall(*[part.format(trace=trace) for part in command], cwd=tmp_path)
    with_a_long_line(trace, "model_chunk", ended=False)
    monkeypatch.setattr(reader, "MAX_LINE_BYTES", CAP, raising=False)
    args = [part.format(trace=trace) for part in command]
    done, peak = peak_of(lambda: toolcall(*args, cwd=tmp_path))
    assert peak < 4 * CAP, f"peak {peak:,} bytes"
    one_line_error(done, str(trace), "is longer than 1,048,576 bytes")


def test_trace_list_lists_beside_a_long_line_in_bounded_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for question in ("What's 12*5+3?", "What's 1+1?"):
        assert toolcall("run", question, "-q", cwd=tmp_path).returncode == 0
    [first, second] = sorted(trace_dir().iterdir())
    with_a_long_line(second, "model_chunk", ended=False)
    with_a_long_line(first, "run_finished", ended=True)
    monkeypatch.setattr(reader, "MAX_LINE_BYTES", CAP, raising=False)
    done, peak = peak_of(lambda: toolcall("trace", "list", "--json", cwd=tmp_path))
    assert peak < 4 * CAP, f"peak {peak:,} bytes"
    assert done.returncode == 0
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [row["question"] for row in rows] == ["What's 1+1?"]
    assert done.stderr == (
        f"toolcall: warning: {first} is not a toolcall trace: line "
        f"{len(first.read_bytes().splitlines())} is longer than 1,048,576 bytes\n"
    )


@pytest.mark.parametrize(
    ("data", "lines"),
    [
        (b"", []),
        (b"ab\ncd", [(1, "ab", True), (2, "cd", False)]),
        (b"abcde\n", [(1, "abcde", True)]),  # the cap is the line's, its newline aside
        (b"abcdef\nf\n", [(1, None, True), (2, "f", True)]),
        (b"abcdef", [(1, None, False)]),
        ("a\u2028b\n".encode(), [(1, "a\u2028b", True)]),
        (b"\n\n", [(1, "", True), (2, "", True)]),
    ],
)
def test_lines_are_read_to_the_cap_and_no_further(
    data: bytes, lines: list[tuple[int, str | None, bool]]
) -> None:
    read = [(line.number, line.text, line.ended) for line in lines_of(io.BytesIO(data), 5)]
    assert read == lines


# --- any value anywhere: a result, or one line ---------------------------------------------------

SUM = "What's 12*5+3?"
WEATHER = "北京今天适合穿短袖吗？"
TWO_TOOLS = "Convert 10 km to miles and what's the weather in Paris"
WRONG_PARAM = ("--faults", "wrong_param", "-q")
RECORDINGS: dict[str, list[str]] = {}
"""Real traces of this toolcall (regex, native calls with faults, streamed, --dag with
retrieval, a chat of two questions cut short), made once per test process."""


def recordings(tmp_path: Path) -> dict[str, list[str]]:
    if RECORDINGS:
        return RECORDINGS
    made = {
        "regex": recorded(tmp_path, "regex", "run", "北京和上海今天天气怎么样？", "-q"),
        "schema": recorded(tmp_path, "schema", "run", SUM, "-s", "schema", *WRONG_PARAM),
        "stream": recorded(tmp_path, "stream", "run", WEATHER, "-s", "stream", "-q"),
        "dag": recorded(tmp_path, "dag", "run", TWO_TOOLS, "--dag", "--retrieve", "3", "-q"),
        "chat": recorded(tmp_path, "chat", "chat", stdin=f"What is 2+2?\n{WEATHER}\n"),
    }
    for name, path in made.items():
        RECORDINGS[name] = path.read_text(encoding="utf-8").splitlines()
    cut = {"kind": "interrupted", "reason": "ctrl-c", "detail": "interrupted by Ctrl-C", "t": 1.0}
    RECORDINGS["chat"].append(json.dumps(cut))
    return RECORDINGS


WORDS = ["", "x", "NaN", "-Infinity", "run_started", "tool_call_parsed", "model_chunk",
         "trace_header", "schema", "stream", "json", "admin", "scripted", "offline", "#1.0",
         "\u2028", "<tool_call>", "</tool_call>", "get_weather", "assistant", "tool"]  # fmt: skip
KEYS = ["kind", "name", "id", "call", "result", "content", "role", "tool_calls", "function",
        "arguments", "messages", "tools", "request", "settings", "iteration", "delta", "usage",
        "question", "text", "raw", "stream"]  # fmt: skip

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from(WORDS),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


def like(value: Any) -> st.SearchStrategy[Any]:
    """Another value of the same JSON type: it passes the reader's checks, and tests what
    each command makes of it."""
    if isinstance(value, bool):
        return st.booleans()
    if isinstance(value, int):
        return st.integers(min_value=-(2**70), max_value=2**70)
    if isinstance(value, float):
        return st.floats(allow_nan=False, allow_infinity=False)
    if isinstance(value, str):
        return st.text(max_size=12) | st.sampled_from(WORDS)
    if isinstance(value, list):
        return st.lists(json_values, max_size=3) | st.just(value[::-1])
    if isinstance(value, dict):
        return st.dictionaries(st.sampled_from(KEYS), json_values, max_size=3)
    return json_values


@st.composite
def corrupted(draw: st.DrawFn, lines: list[str]) -> str:
    """The trace with one value somewhere in one line replaced, removed or made another."""
    lines = list(lines)
    number = draw(st.integers(0, len(lines) - 1))
    record = json.loads(lines[number])
    how = draw(st.sampled_from(["replace", "alike", "remove", "line"]))
    if how == "line":
        lines[number] = draw(st.builds(json.dumps, json_values) | st.text(max_size=20))
        return "".join(line + "\n" for line in lines)
    parent: Any = None
    key: Any = None
    node: Any = record
    while isinstance(node, (dict, list)) and node and (parent is None or draw(st.booleans())):
        key = draw(st.sampled_from(sorted(node) if isinstance(node, dict) else range(len(node))))
        parent, node = node, node[key]
    if parent is not None and how == "remove" and isinstance(parent, dict):
        del parent[key]
    elif parent is not None:
        parent[key] = draw(like(node) if how == "alike" else json_values)
    lines[number] = json.dumps(record)
    return "".join(line + "\n" for line in lines)


READERS: dict[str, tuple[list[str], set[int]]] = {
    "show": (["trace", "show", "--plain", "{trace}"], {0, 2}),
    "show live": (["trace", "show", "{trace}"], {0, 2}),
    "show json": (["trace", "show", "--json", "{trace}"], {0, 2}),
    "list": (["trace", "list", "--json"], {0}),
    "doctor": (["doctor", "--json", "{trace}"], {0, 2, 4}),
    "replay": (["replay", "{trace}", "--no-trace", "--json", "--timeout", "30"], {0, 2, 5}),
    "replay scripted": (
        ["replay", "{trace}", "-m", "scripted", "--no-trace", "--json", "--timeout", "30"],
        {0, 2, 5},
    ),
    "script": (
        [
            "run",
            "hi",
            "-m",
            "scripted",
            "--script",
            "{trace}",
            "--no-trace",
            "-q",
            "--timeout",
            "30",
        ],
        {0, 1, 2, 3, 6},
    ),
}


@pytest.mark.script_left_unused  # a corrupted script rarely lines up with its run
@pytest.mark.parametrize("reader_name", READERS)
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_any_value_anywhere_gives_a_result_or_one_line(
    tmp_path: Path, reader_name: str, data: st.DataObject
) -> None:
    traces = recordings(tmp_path)
    name = data.draw(st.sampled_from(sorted(traces)), label="recording")
    text = data.draw(corrupted(traces[name]), label="trace")
    directory = trace_dir()
    directory.mkdir(parents=True, exist_ok=True)
    trace = directory / "20250102-030405-000001.jsonl"  # where `trace list` finds it
    trace.write_text(text, encoding="utf-8")
    command, codes = READERS[reader_name]
    with within(BUDGET):
        done = toolcall(*[part.format(trace=trace) for part in command], cwd=tmp_path)
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert done.returncode in codes, done.stderr
    if done.returncode == 2:
        one_line_error(done)
    if reader_name == "list" and done.stderr:
        assert done.stderr.startswith(f"toolcall: warning: {trace} ")
        assert done.stderr.count("\n") == 1


@pytest.mark.parametrize("content", [b"", b"\x00\x01garbage"], ids=["empty", "one cut line"])
def test_a_file_with_no_trace_records_is_refused_by_every_reader(
    tmp_path: Path, content: bytes
) -> None:
    """`trace show` drew such a file as an empty trace "written before the format had a
    header" and exited 0, where doctor refused it."""
    path = tmp_path / "not-a-trace.jsonl"
    path.write_bytes(content)
    for command in (["trace", "show", "--plain"], ["doctor"], ["replay"]):
        done = toolcall(*command, str(path), cwd=tmp_path)
        assert done.returncode == 2, command
        assert done.stderr == f"toolcall: error: {path} holds no trace records\n", command
