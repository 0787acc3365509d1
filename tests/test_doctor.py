"""`toolcall doctor`: the troubleshooting checklist over recorded runs. Traces come from real
runs (the offline model with each fault, the scripted model, a refused connection); a few are
then damaged on purpose, as a broken proxy or a crash would leave them."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from in_process import Finished, toolcall

from toolcall_cli.offline import FAULT_KINDS, OfflineModel
from toolcall_cli.trace.writer import host_tag, process_start, start_ticks
from toolcall_cli.wire import ModelRequest
from toolcall_cli.wording import plural

WEATHER = "北京今天适合穿短袖吗？"
SUM = "What's 12*5+3?"
TWO_CITIES = "北京和上海今天天气怎么样？"
CONVERSION = "25°C 是多少华氏度？"

STRATEGY_FLAGS: dict[str, tuple[str, ...]] = {
    "regex": ("-s", "regex"),
    "schema": ("-s", "schema", "--schema-mode", "tools"),
    "schema_json": ("-s", "schema", "--schema-mode", "json"),
    "stream": ("-s", "stream"),
    "stream_native": ("-s", "stream", "--stream-mode", "native"),
}
TEXT_ONLY = ("regex", "stream")
"""prose_around, code_fence and missing_close_tag belong to the tagged text protocol."""

# kind -> (question, the step that names it, its problem code, words the report uses for it)
FAULTS: dict[str, tuple[str, int, str, str]] = {
    "no_tool": (WEATHER, 1, "hard_answer", "硬答"),
    "unknown_tool": (WEATHER, 2, "unknown_tool", "unknown tool"),
    "wrong_param": (WEATHER, 2, "invalid_arguments", "did you mean `city`"),
    "missing_arg": (SUM, 2, "invalid_arguments", "missing required argument `expression`"),
    "extra_arg": (WEATHER, 2, "invalid_arguments", "unexpected argument"),  # left out; ran
    "wrong_type": (CONVERSION, 2, "coerced", "wrong argument type"),
    "repeat_call": (SUM, 4, "repeated_call", "again with the same arguments"),
    "single_quotes": (WEATHER, 2, "repaired_json", "single quotes"),
    "trailing_comma": (SUM, 2, "repaired_json", "trailing comma"),
    "unquoted_keys": (SUM, 2, "repaired_json", "unquoted keys"),
    "code_fence": (WEATHER, 2, "call_format", "```json fenced block"),
    "missing_close_tag": (SUM, 2, "call_format", "no closing </tool_call>"),
    "prose_around": (WEATHER, 2, "call_format", "text after the call"),
    "broken_batch": (TWO_CITIES, 2, "parse_error", "could not be read"),
    "truncated": (SUM, 2, "truncated", "cut off inside a call"),
}


def fault_pairs() -> Iterator[Any]:
    for kind in FAULTS:
        for strategy in STRATEGY_FLAGS:
            text_only = kind in ("prose_around", "code_fence", "missing_close_tag")
            if (text_only and strategy not in TEXT_ONLY) or (
                kind == "broken_batch" and strategy == "schema_json"  # one call per reply
            ):
                continue
            yield pytest.param(kind, strategy, id=f"{kind}-{strategy}")


def record(tmp_path: Path, question: str, *flags: str, name: str = "trace.jsonl") -> Path:
    """A run's trace, as `toolcall run --trace` writes it."""
    trace = tmp_path / name
    done = toolcall("run", question, "--trace", str(trace), "-q", *flags, cwd=tmp_path)
    assert done.returncode in (0, 1, 3), done.stderr
    return trace


def as_v0(trace: Path) -> Path:
    """The trace as toolcall wrote it before format 1: no header, no `t`, no chunks."""
    records = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    old = [
        {k: v for k, v in r.items() if k != "t"}
        for r in records
        if r["kind"] not in ("trace_header", "model_chunk")
    ]
    trace.write_text("".join(json.dumps(r) + "\n" for r in old), encoding="utf-8")
    return trace


def doctor(tmp_path: Path, *args: str, env: dict[str, str | None] | None = None) -> Finished:
    return toolcall("doctor", *args, cwd=tmp_path, env=env)


def report(tmp_path: Path, trace: Path) -> dict[str, Any]:
    done = doctor(tmp_path, str(trace), "--json")
    assert done.returncode in (0, 4), done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    assert done.returncode == (4 if data["problems"] else 0)
    return data


def findings(data: dict[str, Any], step: int, run: int = 1) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = data["runs"][run - 1]["steps"][step - 1]["findings"]
    return found


def problems(data: dict[str, Any], run: int = 1) -> dict[int, list[str]]:
    """Problem codes by step (notes left out); steps that passed are absent."""
    by_step = {}
    for step in data["runs"][run - 1]["steps"]:
        codes = [f["problem"] for f in step["findings"] if not f["note"]]
        assert (step["status"] == "problem") == bool(codes)
        if codes:
            by_step[step["step"]] = codes
    return by_step


# --- each fault kind of the offline model is named ----------------------------------------------


@pytest.mark.parametrize(("kind", "strategy"), list(fault_pairs()))
def test_doctor_names_each_fault_kind(tmp_path: Path, kind: str, strategy: str) -> None:
    question, step, code, words = FAULTS[kind]
    trace = record(tmp_path, question, "--faults", kind, *STRATEGY_FLAGS[strategy])
    data = report(tmp_path, trace)
    by_step = problems(data)
    assert code in by_step.get(step, []), by_step
    if (kind, strategy) == ("missing_arg", "stream_native"):
        # The offline model sends the same broken call twice there: the repeat withdraws the
        # tools, and the doctor names that too.
        assert by_step.pop(step + 2, None) == ["tools_withdrawn"], by_step
    assert set(by_step) == {step}, f"only step {step} should fail: {by_step}"
    [named] = [f for f in findings(data, step) if f["problem"] == code][:1]
    assert named["iteration"] is not None and named["event"] is not None
    if kind != "no_tool" and (kind, strategy) != ("missing_arg", "stream_native"):
        # The offline model recovers from every fault it makes: the report says how.
        assert named["recovered"], named
    assert data["runs"][0]["cause"] and data["runs"][0]["fix"]["text"]

    shown = doctor(tmp_path, str(trace))
    assert shown.returncode == 4
    assert words in shown.stdout, shown.stdout
    assert f"✗ {plural(data['problems'], 'problem')} found in 1 of 1 run" in shown.stdout
    assert "Most likely cause:" in shown.stdout and "Fix to try first" in shown.stdout


def test_every_fault_kind_is_covered() -> None:
    assert set(FAULTS) | {"split_tags"} == set(FAULT_KINDS)


def test_an_unknown_tool_is_put_right_by_the_tool_it_meant(tmp_path: Path) -> None:
    data = report(tmp_path, record(tmp_path, WEATHER, "--faults", "unknown_tool"))
    [finding] = findings(data, 2)
    assert finding["tool"] == "get_weather"
    assert finding["recovered"].startswith("fixed at iteration 2 by #2.0 (get_weather)")
    assert data["runs"][0]["fix"]["kind"] == "prompt rule"


def test_a_repeated_mistake_is_listed_at_each_iteration(tmp_path: Path) -> None:
    # Seed 1: the offline model repeats its wrong parameter name once before it corrects it.
    trace = record(tmp_path, WEATHER, "--faults", "wrong_param", "--seed", "0")
    data = report(tmp_path, trace)
    wrong = [f for f in findings(data, 2) if f["problem"] == "invalid_arguments"]
    assert [f["iteration"] for f in wrong] == [1, 2]
    assert all(f["recovered"].startswith("fixed at iteration 3") for f in wrong)


# --- v1 traces (header first, "t" on each record, streamed chunks) ------------------------------


def test_split_tags_is_seen_in_the_chunks_of_a_v1_trace(tmp_path: Path) -> None:
    trace = record(tmp_path, WEATHER, "--faults", "split_tags", "-s", "stream")
    data = report(tmp_path, trace)
    assert data["version"] == 1
    [note] = findings(data, 2)
    assert note["problem"] == "split_tags" and note["note"] and note["iteration"] == 1
    # Nothing went wrong: the stream parser joined the tags, so every step passes.
    assert data["problems"] == 0
    shown = doctor(tmp_path, str(trace))
    assert shown.returncode == 0
    assert "split a <tool_call> or </tool_call> tag" in shown.stdout


def test_native_chunks_have_no_tags_to_split(tmp_path: Path) -> None:
    trace = record(tmp_path, WEATHER, "-s", "stream", "--stream-mode", "native")
    assert '"kind": "model_chunk"' in trace.read_text(encoding="utf-8")
    assert findings(report(tmp_path, trace), 2) == []


@pytest.mark.parametrize(
    ("question", "kind", "flags"),
    [
        (WEATHER, "unknown_tool", ("-s", "regex")),
        (TWO_CITIES, "broken_batch", ("-s", "schema", "--schema-mode", "tools")),
        (WEATHER, "no_tool", ("-s", "schema", "--schema-mode", "json")),
        (SUM, "repeat_call", ("-s", "stream", "--stream-mode", "native")),
    ],
)
def test_a_v0_and_a_v1_trace_of_one_run_read_alike(
    tmp_path: Path, question: str, kind: str, flags: tuple[str, ...]
) -> None:
    v1 = record(tmp_path, question, "--faults", kind, *flags)
    v0 = tmp_path / "v0.jsonl"
    v0.write_bytes(v1.read_bytes())
    old, new = report(tmp_path, as_v0(v0)), report(tmp_path, v1)
    assert (old["version"], new["version"]) == (0, 1)

    def gist(data: dict[str, Any]) -> list[Any]:
        return [
            (
                step["status"],
                [(f["problem"], f["iteration"], f["message"]) for f in step["findings"]],
            )
            for step in data["runs"][0]["steps"]
        ]

    assert gist(old) == gist(new)
    assert old["problems"] > 0


def test_step_one_reads_the_tools_from_the_v1_header(tmp_path: Path) -> None:
    trace = record(tmp_path, WEATHER, "--faults", "no_tool")
    assert problems(report(tmp_path, trace)) == {1: ["hard_answer"]}
    lines = trace.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["tools"] = [t for t in header["tools"] if t["name"] == "calculate"]
    trace.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    # With only a calculator on offer, answering a weather question directly is no 硬答.
    data = report(tmp_path, trace)
    assert problems(data) == {}
    assert "no tool fits" in data["runs"][0]["steps"][0]["summary"]


# --- 硬答 from a scripted model, and runs that pass -------------------------------------------


def script(tmp_path: Path, *replies: Any) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(list(replies), ensure_ascii=False), encoding="utf-8")
    return str(path)


def native(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    """One native tool call, as a chat completion carries it."""
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {"id": call_id, "type": "function", "function": function}


def calls(*made: dict[str, Any]) -> dict[str, Any]:
    """A reply of native calls."""
    return {"role": "assistant", "tool_calls": list(made)}


def scripted_report(
    tmp_path: Path, question: str, *replies: Any, flags: tuple[str, ...] = ()
) -> Any:
    """The doctor's report on a run of these replies, under schema (native calls)."""
    played = ("--model", "scripted", "--script", script(tmp_path, *replies), "-s", "schema")
    return report(tmp_path, record(tmp_path, question, *played, *flags))


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        (WEATHER, "北京今天晴，最高 28°C，很适合穿短袖。"),
        ("What's the weather in Paris?", "It's sunny in Paris today, about 22°C."),
        ("现在上海气温怎么样？", "上海位于中国东部，气候温和。"),  # the classic made-up answer
    ],
)
def test_a_weather_question_answered_without_the_tool_is_hard_answering(
    tmp_path: Path, question: str, answer: str
) -> None:
    trace = record(tmp_path, question, "--model", "scripted", "--script", script(tmp_path, answer))
    data = report(tmp_path, trace)
    assert problems(data) == {1: ["hard_answer"]}
    [finding] = findings(data, 1)
    assert finding["tool"] == "get_weather"
    assert (finding["iteration"], finding["event_kind"]) == (1, "final_answer")
    assert data["runs"][0]["fix"]["kind"] == "prompt rule"
    shown = doctor(tmp_path, str(trace))
    assert shown.returncode == 4
    assert "✗ 1. Should a tool have been called" in shown.stdout
    assert "硬答" in shown.stdout and "get_weather" in shown.stdout


def test_a_clean_run_passes_every_step(tmp_path: Path) -> None:
    trace = record(tmp_path, WEATHER)
    data = report(tmp_path, trace)
    steps = data["runs"][0]["steps"]
    assert [s["status"] for s in steps] == ["pass"] * 4
    assert all(s["findings"] == [] for s in steps)
    assert data["runs"][0]["cause"] is None and data["problems"] == 0
    shown = doctor(tmp_path, str(trace))
    assert shown.returncode == 0
    assert shown.stdout.count("✓ ") == 5  # four steps and the verdict
    assert "✓ every step passed" in shown.stdout


@pytest.mark.parametrize("question", ["你好，你是谁？", "Hello!"])
def test_answering_directly_where_no_tool_fits_passes(tmp_path: Path, question: str) -> None:
    data = report(tmp_path, record(tmp_path, question))
    assert (
        data["runs"][0]["steps"][0]["summary"]
        == "no: answered directly, and no tool fits the question"
    )
    assert problems(data) == {}


def test_a_shared_city_name_alone_is_no_hard_answering(tmp_path: Path) -> None:
    # 北京 is in get_weather's description too, but nothing asks for live data.
    answer = "北京烤鸭：全聚德已有 150 多年历史。"
    trace = record(
        tmp_path, "北京有什么好吃的？", "--model", "scripted", "--script", script(tmp_path, answer)
    )
    data = report(tmp_path, trace)
    summary = data["runs"][0]["steps"][0]["summary"]
    assert summary.startswith("no: answered directly, and only `get_") and "weakly" in summary
    assert problems(data) == {}


def test_each_run_of_a_trace_is_diagnosed(tmp_path: Path) -> None:
    record(tmp_path, SUM)
    trace = record(tmp_path, WEATHER, "--faults", "unknown_tool")  # appended to the same file
    data = report(tmp_path, trace)
    assert [r["question"] for r in data["runs"]] == [SUM, WEATHER]
    assert problems(data, run=1) == {} and problems(data, run=2) == {2: ["unknown_tool"]}
    # Events are counted through the whole trace, so run 2's point past run 1's records.
    [finding] = findings(data, 2, run=2)
    kinds = [json.loads(line)["kind"] for line in trace.read_text("utf-8").splitlines()]
    assert finding["event"] > kinds.index("run_started", 1)
    shown = doctor(tmp_path, str(trace))
    assert "Run 2" in shown.stdout and "✗ 1 problem found in 1 of 2 runs" in shown.stdout


def test_doctor_says_its_counts_in_words_not_with_s_in_brackets(tmp_path: Path) -> None:
    """Its summaries said "1 call(s) in 1 round(s)" and "1 problem(s) found"."""
    one = report(tmp_path, record(tmp_path, SUM))["runs"][0]["steps"]
    assert one[1]["summary"] == "yes: 1 call, every name and argument valid"
    assert one[2]["summary"] == "yes: 1 call in 1 round, each answered once, by its id"
    trace = record(tmp_path, WEATHER, "--faults", "unknown_tool")
    shown = doctor(tmp_path, str(trace)).stdout
    assert "(s)" not in shown and "✗ 1 problem found in 1 of 2 runs" in shown


# --- results that do not get back: traces damaged as a broken proxy would ------------------------


def rewrite(trace: Path, change: Any) -> None:
    """Apply `change(record)` to every record of the trace, in place."""
    records = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    for r in records:
        change(r)
    trace.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")


def tool_messages(r: dict[str, Any]) -> list[dict[str, Any]]:
    if r["kind"] == "fed_back":
        return list(r["messages"])
    if r["kind"] == "iteration_started" and r["iteration"] == 2:
        return [m for m in r["request"]["messages"] if m["role"] == "tool"]
    return []


def test_a_result_never_fed_back_is_a_wiring_problem(tmp_path: Path) -> None:
    trace = record(tmp_path, WEATHER, "-s", "schema")

    def drop_results(r: dict[str, Any]) -> None:
        if r["kind"] == "fed_back":
            r["messages"] = []
        if r["kind"] == "iteration_started":
            r["request"]["messages"] = [m for m in r["request"]["messages"] if m["role"] != "tool"]

    rewrite(trace, drop_results)
    data = report(tmp_path, trace)
    assert problems(data) == {3: ["not_fed_back"]}
    assert data["runs"][0]["fix"]["kind"] == "wiring"
    assert "tool_call_id" in data["runs"][0]["fix"]["text"]


def test_a_result_sent_under_another_id_is_unpaired(tmp_path: Path) -> None:
    trace = record(tmp_path, WEATHER, "-s", "schema")

    def forget_the_call(r: dict[str, Any]) -> None:
        if r["kind"] == "iteration_started" and r["iteration"] == 2:
            for m in r["request"]["messages"]:
                m.pop("tool_calls", None)

    rewrite(trace, forget_the_call)
    assert problems(report(tmp_path, trace)) == {3: ["unpaired"]}

    def lose_in_the_request(r: dict[str, Any]) -> None:
        for m in tool_messages(r) if r["kind"] == "iteration_started" else []:
            m["tool_call_id"] = "call_elsewhere"

    rewrite(trace, lose_in_the_request)
    assert problems(report(tmp_path, trace)) == {3: ["not_sent"]}


def test_a_text_protocol_result_block_with_the_wrong_id(tmp_path: Path) -> None:
    trace = record(tmp_path, WEATHER)

    def renumber(r: dict[str, Any]) -> None:
        for m in r["messages"] if r["kind"] == "fed_back" else []:
            m["content"] = m["content"].replace('id="#1.0"', 'id="#9.9"')

    rewrite(trace, renumber)
    assert problems(report(tmp_path, trace)) == {3: ["not_fed_back", "orphan_result"]}


def test_a_call_answered_twice(tmp_path: Path) -> None:
    trace = record(tmp_path, WEATHER, "-s", "schema")

    def twice(r: dict[str, Any]) -> None:
        if r["kind"] == "fed_back":
            r["messages"] = r["messages"] * 2

    rewrite(trace, twice)
    assert problems(report(tmp_path, trace)) == {3: ["answered_twice"]}


# --- how runs end --------------------------------------------------------------------------------


def test_a_run_stopped_by_the_iteration_limit(tmp_path: Path) -> None:
    trace = record(
        tmp_path, WEATHER, "--faults", "wrong_param", "--seed", "0", "--max-iterations", "2"
    )
    data = report(tmp_path, trace)
    assert data["runs"][0]["stop_reason"] == "limit"
    by_step = problems(data)
    assert by_step[4] == ["iteration_limit"]
    assert by_step[2] == ["invalid_arguments", "invalid_arguments"]
    assert all(f["recovered"] is None and f["fixable"] for f in findings(data, 2))
    # Never put right: said under each wrong call, and not under the limit itself.
    assert doctor(tmp_path, str(trace)).stdout.count("→ not put right") == 2
    # The limit is where it stopped; the wrong arguments are why.
    assert (
        data["runs"][0]["cause"]
        == "the model's arguments for `get_weather` did not match its schema"
    )


def test_tools_withdrawn_after_failed_rounds(tmp_path: Path) -> None:
    replies = (
        '<tool_call>{"name": "get_wether", "arguments": {"city": "北京"}}</tool_call>',
        "北京今天晴。",
    )
    trace = record(
        tmp_path,
        WEATHER,
        "--model",
        "scripted",
        "--script",
        script(tmp_path, *replies),
        "--max-failed-rounds",
        "1",
    )
    data = report(tmp_path, trace)
    assert problems(data) == {2: ["unknown_tool"], 4: ["tools_withdrawn"]}
    assert data["runs"][0]["steps"][3]["summary"] == "yes: answered at iteration 2, without tools"
    assert "get_weather" in data["runs"][0]["cause"]


def test_a_failed_call_sent_again_is_named_as_the_live_view_names_it(tmp_path: Path) -> None:
    # The live view says "the model sent a failed call again unchanged"; the doctor said the
    # model "repeated a call whose result it had", which reads as if the call had worked.
    call = '<tool_call>{"name": "get_weather", "arguments": {"day": "today"}}</tool_call>'
    replies = (call, call, "北京今天的天气没查到：缺少城市。")
    trace = record(tmp_path, WEATHER, "--model", "scripted", "--script", script(tmp_path, *replies))
    [withdrawn] = [
        f for f in findings(report(tmp_path, trace), 4) if f["problem"] == "tools_withdrawn"
    ]
    assert (
        withdrawn["message"]
        == "the model sent a failed call again unchanged, so tools were withdrawn"
    )


def test_a_model_that_cannot_be_reached(tmp_path: Path, refusing_port: int) -> None:
    url = f"http://127.0.0.1:{refusing_port}/v1"
    trace = record(tmp_path, WEATHER, "--model", "m", "--base-url", url)
    data = report(tmp_path, trace)
    assert problems(data) == {4: ["model_failed"]}
    assert data["runs"][0]["cause"] == "the model request failed (connection)"
    assert "--base-url" in data["runs"][0]["fix"]["text"]


def test_a_trace_cut_off_mid_run(tmp_path: Path) -> None:
    trace = record(tmp_path, WEATHER)
    lines = trace.read_text(encoding="utf-8").splitlines()
    cut = next(i for i, line in enumerate(lines) if '"kind": "tool_finished"' in line)
    # A crash mid-write: the records up to the tool's result, then half a line.
    trace.write_text("\n".join(lines[: cut + 1]) + "\n" + lines[cut + 1][:25], encoding="utf-8")
    data = report(tmp_path, trace)
    assert data["notes"] == [f"line {cut + 2} was cut mid-write and is left out"]
    assert problems(data) == {4: ["cut_off"]}
    [step3] = findings(data, 3)
    assert step3["note"] and "the run stopped" in step3["message"]
    assert data["runs"][0]["stop_reason"] is None


def test_a_trace_whose_writer_still_runs_is_under_way_not_cut_off(tmp_path: Path) -> None:
    # A run under way in another terminal: its trace ends mid-run, and the process its header
    # names is alive on this host. Once that process is gone, the same trace was cut off.
    trace = record(tmp_path, WEATHER)
    lines = trace.read_text(encoding="utf-8").splitlines()
    cut = next(i for i, line in enumerate(lines) if '"kind": "tool_finished"' in line)
    header = json.loads(lines[0])
    assert {key: header["writer"][key] for key in ("pid", "host")} == {
        "pid": os.getpid(),
        "host": host_tag(),
    }
    assert header["writer"]["host"] != socket.gethostname()  # a digest: names no host
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as writer:
        try:
            header["writer"]["pid"] = writer.pid
            if "started" in header["writer"]:
                header["writer"]["started"] = process_start(writer.pid)
            kept = [json.dumps(header), *lines[1 : cut + 1]]
            trace.write_text("\n".join(kept) + "\n", encoding="utf-8")
            data = report(tmp_path, trace)
        finally:
            writer.kill()
    assert problems(data) == {}
    step4 = data["runs"][0]["steps"][3]
    assert step4["summary"] == "not yet: the run is still under way"
    assert f"pid {writer.pid}" in step4["findings"][0]["message"]
    assert problems(report(tmp_path, trace)) == {4: ["cut_off"]}  # the writer is gone now


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="no /proc on this system")
def test_a_cut_off_trace_whose_writers_pid_another_process_took_is_cut_off(
    tmp_path: Path,
) -> None:
    """The writer's pid, used again by another process once the writer was killed, made a
    trace cut off mid-run "still being written". The header also records when its writer
    started, which the process now holding that pid does not share."""
    trace = record(tmp_path, WEATHER)
    lines = trace.read_text(encoding="utf-8").splitlines()
    cut = next(i for i, line in enumerate(lines) if '"kind": "tool_finished"' in line)
    header = json.loads(lines[0])
    assert header["writer"]["started"] == process_start(os.getpid())
    boot_id = Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
    assert boot_id not in lines[0]  # a shared trace does not name the machine's boot
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as other:
        try:
            header["writer"]["pid"] = other.pid  # the writer's pid, now another process's
            kept = [json.dumps(header), *lines[1 : cut + 1]]
            trace.write_text("\n".join(kept) + "\n", encoding="utf-8")
            reused = report(tmp_path, trace)
            del header["writer"]["started"]  # a trace written before headers kept it
            kept = [json.dumps(header), *lines[1 : cut + 1]]
            trace.write_text("\n".join(kept) + "\n", encoding="utf-8")
            older = report(tmp_path, trace)
        finally:
            other.kill()
    assert problems(reused) == {4: ["cut_off"]}
    # Without a start time, a live process with the pid is taken for the writer, as before.
    assert older["runs"][0]["steps"][3]["summary"] == "not yet: the run is still under way"


def test_a_process_start_is_read_past_a_command_name_with_spaces_and_brackets() -> None:
    fields = " ".join(str(n) for n in range(3, 53))  # field n holds n: field 22 holds 22
    assert start_ticks(f"42 (a) b (c)) {fields}") == 22


# --- the trace file ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "no such file"),
        ("", "holds no trace records"),
        ("not json\n{}\n", "is not a toolcall trace: line 1 is not JSON"),
        ('{"kind": "notice", "message": "hi"}\n', "records no run"),
        (
            '{"kind": "trace_header", "format": "toolcall-trace", "version": 9}\n'
            '{"kind": "run_started", "question": "q"}\n',
            "is a version 9 trace",
        ),
        (
            '{"kind": "trace_header", "format": "other", "version": 1}\n',
            "has a header of an unknown format",
        ),
        (b"\xff\xfe{}\n", "is not a toolcall trace: line 1"),
        ("[" * 100_000 + "\n", "line 1 is nested too deeply to read"),
    ],
)
def test_a_trace_that_cannot_be_read_exits_2(
    tmp_path: Path, content: str | bytes | None, says: str
) -> None:
    trace = tmp_path / "bad.jsonl"
    if isinstance(content, bytes):
        trace.write_bytes(content)
    elif content is not None:
        trace.write_text(content, encoding="utf-8")
    done = doctor(tmp_path, str(trace))
    assert done.returncode == 2
    assert says in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert done.stdout == ""


def test_without_a_path_the_latest_trace_is_read(tmp_path: Path) -> None:
    """The default trace directory, as `toolcall run` fills it; -N and ids as `trace show`
    takes them."""
    first = toolcall("run", WEATHER, "-q", cwd=tmp_path)
    second = toolcall("run", WEATHER, "-q", "--faults", "unknown_tool", cwd=tmp_path)
    assert (first.returncode, second.returncode) == (0, 0)
    from toolcall_cli.trace.files import trace_dir, trace_files

    older, newer = trace_files(trace_dir())
    latest = doctor(tmp_path, "--json")
    assert latest.returncode == 4
    assert json.loads(latest.stdout)["trace"] == str(newer)
    before = doctor(tmp_path, "-2", "--json")
    assert before.returncode == 0 and json.loads(before.stdout)["trace"] == str(older)
    by_id = doctor(tmp_path, older.stem, "--json")
    assert by_id.returncode == 0 and json.loads(by_id.stdout)["trace"] == str(older)


def test_without_a_path_or_any_trace_it_says_where_it_looked(tmp_path: Path) -> None:
    state = tmp_path / "state"
    done = doctor(tmp_path, env={"TOOLCALL_STATE_DIR": str(state)})
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert f"no traces yet in {state / 'traces'}" in done.stderr


class InterruptedWhileAnswering:
    """The offline model, until the person presses Ctrl-C as the second request goes out."""

    name = "offline"

    def __init__(self) -> None:
        self.inner = OfflineModel()
        self.requests = 0

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        self.requests += 1
        if self.requests == 2:
            raise KeyboardInterrupt
        return self.inner.stream(request)


def test_a_v1_trace_ended_by_ctrl_c(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from toolcall_cli.app import _model_choice as model_choice

    monkeypatch.setattr(model_choice, "get_model", lambda choice: InterruptedWhileAnswering())
    trace = tmp_path / "trace.jsonl"
    done = toolcall("run", WEATHER, "--trace", str(trace), "-q", cwd=tmp_path)
    assert done.returncode == 130
    kinds = [json.loads(line)["kind"] for line in trace.read_text("utf-8").splitlines()]
    assert kinds[-2:] == ["run_finished", "interrupted"]  # as a real Ctrl-C leaves it
    # The person stopped it: nothing in the run went wrong, so no problem (it was exit 4), but
    # the interruption is noted where the run ended.
    data = report(tmp_path, trace)
    assert problems(data) == {} and data["problems"] == 0
    [finding] = findings(data, 4)
    assert finding["note"] and finding["problem"] == "interrupted"
    assert finding["message"] == "interrupted (ctrl-c): interrupted by Ctrl-C"
    assert finding["event"] == len(kinds) - 1  # the `interrupted` record (the header uncounted)
    shown = doctor(tmp_path, str(trace))
    assert shown.returncode == 0
    assert "every step passed, as far as 1 interrupted run got" in shown.stdout


def test_a_run_toolcall_crashed_in_is_a_problem_unlike_one_stopped_from_outside(
    tmp_path: Path,
) -> None:
    trace = record(tmp_path, WEATHER)
    lines = trace.read_text("utf-8").splitlines()
    finished = json.loads(lines[-1])
    assert finished["kind"] == "run_finished"
    cut = {**finished, "stop_reason": "interrupted"}
    crash = {"kind": "interrupted", "reason": "crash", "detail": "KeyError: 'x'", "t": 1.0}
    trace.write_text("\n".join([*lines[:-1], json.dumps(cut), json.dumps(crash)]) + "\n", "utf-8")
    data = report(tmp_path, trace)
    assert problems(data) == {4: ["crashed"]}
    assert "TOOLCALL_DEBUG=1" in data["runs"][0]["fix"]["text"]
    for reason in ("sigterm", "sighup", "broken-pipe"):
        stopped = {**crash, "reason": reason, "detail": "stopped"}
        trace.write_text(
            "\n".join([*lines[:-1], json.dumps(cut), json.dumps(stopped)]) + "\n", "utf-8"
        )
        assert report(tmp_path, trace)["problems"] == 0, reason


def test_a_line_separator_inside_a_record_does_not_split_it(tmp_path: Path) -> None:
    question = "北京今天适合穿短袖吗？\u2028谢谢\u0085好"
    trace = record(tmp_path, question)
    assert "\u2028" in trace.read_text(encoding="utf-8")  # written raw, inside a JSON string
    data = report(tmp_path, trace)
    assert data["runs"][0]["question"] == question and problems(data) == {}


def test_a_call_that_ran_on_a_figure_from_nowhere_is_a_problem(tmp_path: Path) -> None:
    # value=25 is in neither the question nor any result: the live view warned of it, and the
    # answer built on it is wrong, however valid the call's name and arguments are
    made_up = calls(native("c1", "convert_units", value=25, from_unit="C", to_unit="F"))
    question = "What's the temperature in Paris in Fahrenheit?"
    data = scripted_report(tmp_path, question, made_up, "It is 77°F in Paris.")
    assert problems(data) == {2: ["ungrounded"]}
    [finding] = findings(data, 2)
    assert (finding["tool"], finding["event_kind"]) == ("convert_units", "grounding_checked")
    assert "value=25" in finding["message"] and finding["recovered"] is None
    assert data["runs"][0]["fix"]["kind"] == "prompt rule"


def test_an_answer_after_tools_with_a_figure_no_result_holds_is_a_problem(tmp_path: Path) -> None:
    # the live view marks it `answer (unchecked: 30 in no tool result)`: not a clean run
    weather = calls(native("c1", "get_weather", city="Paris"))
    data = scripted_report(
        tmp_path, "What's the weather in Paris?", weather, "Paris is at 30°C today, sunny."
    )
    assert problems(data) == {1: ["ungrounded_answer"]}
    [finding] = findings(data, 1)
    assert finding["event_kind"] == "final_answer" and "30" in finding["message"]
    assert data["runs"][0]["fix"]["kind"] == "prompt rule"


def test_a_refused_made_up_figure_sent_again_unchanged_is_not_put_right(tmp_path: Path) -> None:
    # --grounding check refuses value=25 once; sent again unchanged it runs: that second call
    # is the same made-up figure, not the fix the doctor called it ("fixed at iteration 2")
    made_up = [
        calls(native(f"c{n}", "convert_units", value=25, from_unit="C", to_unit="F"))
        for n in (1, 2)
    ]
    question = "What's the temperature in Paris in Fahrenheit?"
    data = scripted_report(
        tmp_path, question, *made_up, "It is 77°F in Paris.", flags=("--grounding", "check")
    )
    assert problems(data) == {2: ["ungrounded", "ungrounded"]}
    assert [f["recovered"] for f in findings(data, 2)] == [None, None]


def test_a_fix_whose_id_a_made_up_call_had_before_still_counts(tmp_path: Path) -> None:
    # Native ids are the model's: call_0 ran with a made-up figure in reply 1, and the call_0
    # of reply 2 is another call, which put reply 1's bad arguments right.
    first = calls(
        native("call_0", "convert_units", value=31, from_unit="C", to_unit="F"),
        native("call_1", "get_weather", town="Paris"),
    )
    second = calls(native("call_0", "get_weather", city="Paris"))
    data = scripted_report(tmp_path, "What's the weather in Paris?", first, second, "Paris: 11°C.")
    fixed = [f["recovered"] for f in findings(data, 2) if f["problem"] == "invalid_arguments"]
    assert fixed == ["fixed at iteration 2 by call_0 (get_weather)"]


def test_a_result_passed_back_to_a_tool_is_the_models_mistake_not_a_refusal(
    tmp_path: Path,
) -> None:
    # Qwen2.5-0.5B, given 9063, called calculate("9063"): the engine answered that it had the
    # result, and the run answered. The doctor blamed "the tool's policy or the user".
    first = calls(native("c1", "calculate", expression="347*29-1000"))
    echoed = calls(native("c2", "calculate", expression="9063"))
    data = scripted_report(tmp_path, "What is 347 times 29, minus 1000?", first, echoed, "9063")
    assert problems(data) == {2: ["echoed_result"], 4: ["tools_withdrawn"]}
    [finding] = findings(data, 2)
    assert finding["tool"] == "calculate" and "9063" in finding["message"]
    assert finding["recovered"] == "the run still answered"
    run = data["runs"][0]
    assert "policy" not in run["fix"]["text"] and "user" not in run["fix"]["text"]
    assert run["fix"]["kind"] == "prompt rule"
    assert "a result it already had" in run["cause"]


def test_a_call_read_leniently_but_refused_is_not_said_to_have_run(tmp_path: Path) -> None:
    # Qwen2.5-0.5B asked to send an email wrote send_email as bare JSON: read leniently, then
    # refused as an unknown tool. The doctor said "read leniently; the call ran".
    email = '{"name": "send_email", "arguments": {"to": "alice@example.com"}}'
    weather = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
    played = ("--model", "scripted", "--script", script(tmp_path, email, weather, "Paris: 11°C."))
    question = "Email alice@example.com the weather in Paris."
    data = report(tmp_path, record(tmp_path, question, *played, "-s", "regex"))
    framing = [f for f in findings(data, 2) if f["problem"] == "call_format"]
    assert [f["recovered"] for f in framing] == [
        "read leniently; the call did not run (unknown_tool)",
        "read leniently; the call ran",
    ]


def test_the_cause_is_the_first_mistake_left_standing_not_one_put_right(tmp_path: Path) -> None:
    # Every call of Qwen2.5-0.5B under llama-server's template is bare JSON, read leniently; the
    # doctor named that format as the most likely cause even when the run went wrong on an
    # unknown tool the call named.
    email = '{"name": "send_email", "arguments": {"to": "alice@example.com"}}'
    played = ("--model", "scripted", "--script", script(tmp_path, email, "Sent."))
    question = "Email alice@example.com that the meeting moved."
    data = report(tmp_path, record(tmp_path, question, *played, "-s", "regex"))
    assert problems(data)[2] == ["call_format", "unknown_tool"]
    assert data["runs"][0]["cause"].startswith("the model called a tool that does not exist")


def test_doctor_names_the_strategy_in_the_mode_the_run_used(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    flags = ["--strategy", "schema", "--schema-mode", "json", "--trace", str(trace), "-q"]
    assert toolcall("run", "What's 12*5+3?", *flags, cwd=tmp_path).returncode == 0
    shown = toolcall("doctor", str(trace), cwd=tmp_path).stdout
    assert "offline · schema json · 2 iterations · answered" in shown
    (run,) = json.loads(toolcall("doctor", str(trace), "--json", cwd=tmp_path).stdout)["runs"]
    assert (run["strategy"], run["mode"]) == ("schema", "json")


def test_an_eval_run_stopped_because_another_run_failed_is_not_a_crash(tmp_path: Path) -> None:
    """An eval ended the runs under way when one run failed, each as `crash`: doctor then blamed
    each of them on a bug of toolcall's (exit 4) though nothing went wrong in them."""
    from toolcall_cli.evaluate.runner import LiveRun, Runner
    from toolcall_cli.trace import RunProgress, TraceWriter

    trace = record(tmp_path, WEATHER)
    lines = trace.read_text("utf-8").splitlines()
    trace.write_text("\n".join(lines[:-1]) + "\n", "utf-8")  # a run under way: no run_finished
    runner = Runner(plan=None, toolboxes={}, expected={}, retrieval={})  # type: ignore[arg-type]
    writer = TraceWriter.open(trace)
    runner.live["under way"] = LiveRun(writer, RunProgress())  # type: ignore[index]
    runner.halt(RuntimeError("another run's disk filled up"))
    writer.close()
    last = json.loads(trace.read_text("utf-8").splitlines()[-1])
    assert last["kind"] == "interrupted" and "another run failed" in last["detail"]
    data = report(tmp_path, trace)
    assert problems(data) == {} and data["problems"] == 0


def test_a_call_read_leniently_whose_tool_raised_is_said_to_have_run(tmp_path: Path) -> None:
    # A bare-JSON call whose tool ran and raised was said not to have run ("the call did not run
    # (tool_error)"), as one refused before it ran is.
    tools = tmp_path / "down"
    tools.mkdir()
    (tools / "down.py").write_text(
        "from toolcall_cli import tool\n\n\n@tool\ndef lookup_stock(symbol: str) -> str:\n"
        '    """Look up the stock price of a company by its ticker symbol."""\n'
        '    raise RuntimeError("the stock service is down")\n',
        encoding="utf-8",
    )
    stock = '{"name": "lookup_stock", "arguments": {"symbol": "AAPL"}}'
    played = ("--model", "scripted", "--script", script(tmp_path, stock, "No price today."))
    trace = record(tmp_path, "What is AAPL's price?", *played, "-s", "regex", "--tools", str(tools))
    framing = [f for f in findings(report(tmp_path, trace), 2) if f["problem"] == "call_format"]
    assert [f["recovered"] for f in framing] == [
        "read leniently; the call ran and failed (tool_error)"
    ]
