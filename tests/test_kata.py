"""`toolcall kata`: each kata's reference solution passes its own check, a broken solution
fails in the categories it gets wrong (expected against got), and code that hangs, eats
memory or kills its interpreter is stopped with one line while the CLI carries on."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from conformance import needs
from in_process import Finished, toolcall

from toolcall_cli.kata import KATAS, NAMES
from toolcall_cli.kata._offline import kinds_for
from toolcall_cli.offline import FAULT_KINDS


def check(
    tmp_path: Path, name: str, source: str, *flags: str, env: Mapping[str, str | None] | None = None
) -> Finished:
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    return toolcall("kata", "check", str(path), *flags, cwd=tmp_path, env=env)


def cells(output: str) -> dict[str, list[str]]:
    """The score table: category → its cells (built-in, offline faults, real outputs, total),
    each "✓ 3/3", "✗ 1/3" or "-"."""
    table: dict[str, list[str]] = {}
    for line in output.splitlines():
        found = re.findall(r"(?<=\s)(?:[✓✗] \d+/\d+|-)(?=\s|$)", line)
        if len(found) == 4:
            table[line[: line.index(found[0])].strip()] = found
    return table


def passes(output: str, category: str) -> bool:
    row = cells(output).get(category)
    assert row, f"no row {category!r} in:\n{output}"
    return row[3].startswith("✓")


def solution(tmp_path: Path, name: str) -> str:
    done = toolcall("kata", "solution", name, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return done.stdout


# --- the reference solutions ------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_the_reference_solution_passes_its_own_check(tmp_path: Path, name: str) -> None:
    done = check(tmp_path, f"kata_{name}.py", solution(tmp_path, name), "--kata", name)
    assert done.returncode == 0, done.stdout + done.stderr
    total = re.search(r"✓ all (\d+) cases pass", done.stdout)
    assert total and int(total[1]) > 20, done.stdout
    assert "✗" not in done.stdout


@needs("corpus.jsonl", "sse_streams.jsonl")
@pytest.mark.parametrize("name", ["parse", "stream", "loop"])
def test_real_outputs_are_graded_when_present(tmp_path: Path, name: str) -> None:
    done = check(tmp_path, f"kata_{name}.py", solution(tmp_path, name), "--kata", name)
    extra = r"\d+ real (model outputs|servers' tool-call replies) from \S+/(corpus|sse_streams)"
    assert re.search(extra, done.stdout), done.stdout
    real = [row[2] for row in cells(done.stdout).values()]
    assert sum(int(c.split("/")[1]) for c in real if c != "-") > 10, done.stdout


def test_without_the_conformance_data_it_says_so_and_grades_the_rest(tmp_path: Path) -> None:
    empty = tmp_path / "nowhere"
    empty.mkdir()
    env = {"TOOLCALL_CONFORMANCE_DIR": str(empty)}
    done = check(tmp_path, "kata_parse.py", solution(tmp_path, "parse"), env=env)
    assert done.returncode == 0, done.stdout
    assert f"conformance data not found ({empty / 'corpus.jsonl'})" in done.stdout
    assert "real model outputs from toolcall's own recordings" in done.stdout
    table = cells(done.stdout)
    graded = {category for category, row in table.items() if row[2] != "-"}
    assert graded == OWN_GRADED, done.stdout


OWN_GRADED = {"code fence", "no call"}
"""The categories toolcall's own real outputs fall in, where the katas' rules cover them."""


@pytest.mark.parametrize("name", ["parse", "stream"])
def test_with_no_corpus_named_the_own_real_outputs_are_graded_and_the_extra_said_to_be_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.delenv("TOOLCALL_CONFORMANCE_DIR", raising=False)
    done = check(tmp_path, f"kata_{name}.py", solution(tmp_path, name), "--kata", name)
    assert done.returncode == 0, done.stdout
    said = " ".join(done.stdout.split())
    own = re.search(r"real outputs: (\d+) real model outputs from toolcall's own recordings", said)
    assert own and int(own[1]) >= 70, said
    extra = "the extra corpus of public test suites' outputs is not named (an extra, not part of"
    assert extra in said
    assert "point TOOLCALL_CONFORMANCE_DIR or --conformance at its folder" in said
    assert "not found" not in said
    table = cells(done.stdout)
    real = {category: row[2] for category, row in table.items() if row[2] != "-"}
    assert set(real) == OWN_GRADED, done.stdout
    assert sum(int(cell.split("/")[1]) for cell in real.values()) == int(own[1])


def test_loop_with_no_corpus_named_has_no_real_outputs_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOOLCALL_CONFORMANCE_DIR", raising=False)
    done = check(tmp_path, "kata_loop.py", solution(tmp_path, "loop"), "--kata", "loop")
    assert done.returncode == 0, done.stdout
    said = " ".join(done.stdout.split())
    assert "real outputs: the extra corpus of public test suites' outputs is not named" in said
    assert all(row[2] == "-" for row in cells(done.stdout).values()), done.stdout


def test_unreadable_conformance_data_is_said_and_left_out(tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "corpus.jsonl").write_text('{"id": "fine"}\nnot json\n', encoding="utf-8")
    done = check(
        tmp_path, "kata_parse.py", solution(tmp_path, "parse"), "--conformance", str(broken)
    )
    assert done.returncode == 0, done.stdout
    assert f"conformance data unreadable ({broken / 'corpus.jsonl'}, line 2 is not JSON)" in (
        done.stdout
    )


# --- broken solutions: the categories they get wrong, and only those --------------------------

NAIVE_PARSE = """
import json, re

def parse_tool_calls(text):
    calls = []
    for body in re.findall(r"<tool_call>(.*?)</tool_call>", text, re.S):
        try:
            value = json.loads(body)
            calls.append({"name": value["name"], "arguments": value.get("arguments", {})})
        except ValueError as error:
            calls.append({"error": str(error)})
    return calls
"""

# Reads everything right, but only at close(): nothing streams.
LATE_STREAM = """
from toolcall_cli.kata.solutions.stream import StreamParser as Reference

class StreamParser:
    def __init__(self):
        self.chunks = []

    def feed(self, chunk):
        self.chunks.append(chunk)
        return []

    def close(self):
        parser = Reference()
        return parser.feed("".join(self.chunks)) + parser.close()
"""

NAIVE_SCHEMA = """
def build_schema(tools):
    return {"oneOf": [
        {"type": "object",
         "properties": {"name": {"const": t["name"]}, "arguments": t["parameters"]},
         "required": ["name", "arguments"]}
        for t in tools]}

def validate_call(tools, call):
    tool = {t["name"]: t for t in tools}.get(call["name"])
    if tool is None:
        return {}, [{"field": "name", "error": "unknown_tool", "message": "no such tool"}]
    arguments = dict(call["arguments"])
    missing = [r for r in tool["parameters"].get("required", []) if r not in arguments]
    return arguments, [{"field": r, "error": "missing", "message": f"add {r}"} for r in missing]
"""

# A loop as a tutorial writes it: errors go back as {"error": ...} objects, the limit returns a
# sentence, and a hanging tool is waited for.
SEED_LOOP = """
import json

def agent_loop(chat, tools, question, max_iterations=5):
    messages = [{"role": "user", "content": question}]
    for i in range(max_iterations):
        resp = chat(messages)
        if not resp.get("tool_calls"):
            return resp["content"]
        messages.append(resp)
        for tc in resp["tool_calls"]:
            try:
                args = json.loads(tc["function"]["arguments"] or "{}")
                result = tools[tc["function"]["name"]](**args)
            except Exception as e:
                result = {"error": str(e)}
            messages.append({"role": "tool", "tool_call_id": tc["id"],
                             "content": json.dumps(result, ensure_ascii=False)})
    return "Reached the maximum number of iterations."
"""


def test_a_naive_parser_fails_where_models_misbehave(tmp_path: Path) -> None:
    done = check(tmp_path, "mine.py", NAIVE_PARSE, "--kata", "parse")
    assert done.returncode == 1
    for category in ("several calls", "prose around", "no call", "unknown tool"):
        assert passes(done.stdout, category), category
    for category in ("broken JSON", "missing close tag", "code fence", "strings", "cut off"):
        assert not passes(done.stdout, category), category
    paris = '{"arguments": {"city": "Paris"}, "name": "get_weather"}'
    # The failing case's input is shown: without it the candidate knows what was expected of
    # some reply, but not of which.
    assert (
        "✗ broken JSON · built-in · single quotes\n"
        """    input     "<tool_call>{'name': 'get_weather', """
        """'arguments': {'city': 'Paris'}}</tool_call>"\n"""
        f'    expected  {{"calls": [{paris}], "errors": 0}}\n'
        '    got       {"calls": [], "errors": 1}\n'
    ) in done.stdout, done.stdout


def test_a_parser_that_reads_only_at_close_fails_only_streaming(tmp_path: Path) -> None:
    done = check(tmp_path, "mine.py", LATE_STREAM, "--kata", "stream")
    assert done.returncode == 1
    assert not passes(done.stdout, "streaming")
    failing = [category for category, row in cells(done.stdout).items() if "✗" in row[3]]
    assert failing == ["streaming"], done.stdout
    assert "✗ streaming · built-in · prose goes out with the chunk that brought it" in done.stdout
    assert '    got       ["", "", "", "The weather in Paris is sunny."]' in done.stdout


def test_a_schema_without_coercion_or_an_answer_fails_there(tmp_path: Path) -> None:
    done = check(tmp_path, "mine.py", NAIVE_SCHEMA, "--kata", "schema")
    assert done.returncode == 1
    assert passes(done.stdout, "schema shape") and passes(done.stdout, "unknown tool")
    for category in ("schema accepts", "coercion", "type errors", "range", "enum"):
        assert not passes(done.stdout, category), category
    assert '✗ coercion · built-in · integer from "2"' in done.stdout
    assert '"passengers": "2"' in done.stdout  # got: left a string


def test_the_seed_loop_fails_on_errors_limits_and_hanging_tools(tmp_path: Path) -> None:
    done = check(tmp_path, "mine.py", SEED_LOOP, "--kata", "loop")
    assert done.returncode == 1
    assert passes(done.stdout, "single call") and passes(done.stdout, "several calls")
    for category in ("loop", "exception", "timeout", "unknown tool", "wrong arguments"):
        assert not passes(done.stdout, category), category
    assert re.search(r'got       "Reached the maximum number of iterations\."', done.stdout)
    assert "naming 'the weather service is down for maintenance'" in done.stdout


# --- starting a kata ----------------------------------------------------------------------------


def test_list_names_every_kata() -> None:
    done = toolcall("kata", "list", cwd=Path.cwd())
    assert done.returncode == 0
    listed = [line.split()[0] for line in done.stdout.splitlines() if line[:1].isalpha()]
    assert listed[: len(NAMES)] == list(NAMES)
    assert {"request", "prompt"} <= set(NAMES)
    assert "agent_loop(chat, tools, question, max_iterations)" in done.stdout


@pytest.mark.parametrize("kata", KATAS, ids=NAMES)
def test_new_writes_a_starter_that_check_grades(tmp_path: Path, kata: object) -> None:
    from toolcall_cli.kata import Kata

    assert isinstance(kata, Kata)
    done = toolcall("kata", "new", kata.name, "work", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    starter = tmp_path / "work" / kata.file_name
    text = starter.read_text(encoding="utf-8")
    assert text.startswith(f"# toolcall kata {kata.name} · started ")
    assert all(f"def {name}(" in text or f"class {name}:" in text for name in kata.required)
    assert 'raise NotImplementedError("write this")' in text
    compile(text, str(starter), "exec")
    assert text.count('"""') >= 4  # the rules and each interface's docstring came along
    again = toolcall("kata", "new", kata.name, "work", cwd=tmp_path)
    assert again.returncode == 2 and "exists already" in again.stderr


def test_check_shows_the_time_since_new(tmp_path: Path) -> None:
    assert toolcall("kata", "new", "parse", cwd=tmp_path).returncode == 0
    starter = tmp_path / "kata_parse.py"
    hour_ago = (datetime.now().astimezone() - timedelta(hours=1)).isoformat(timespec="seconds")
    text = re.sub(
        r"started \S+", f"started {hour_ago}", starter.read_text(encoding="utf-8"), count=1
    )
    done = check(tmp_path, "kata_parse.py", text)
    assert done.returncode == 1
    assert "1 h 0 min since `toolcall kata new`" in done.stdout
    assert "raised NotImplementedError: write this (kata_parse.py, line" in done.stdout


def test_every_fault_kind_is_met_by_some_kata() -> None:
    text, _ = kinds_for("text")
    native, _ = kinds_for("native")
    assert set(text) | set(native) == set(FAULT_KINDS)


# --- code that misbehaves is stopped, never run in the CLI's process ------------------------


def test_a_hanging_solution_is_stopped_with_a_clear_line(tmp_path: Path) -> None:
    hanging = "def parse_tool_calls(text):\n    while True:\n        pass\n"
    done = check(tmp_path, "mine.py", hanging, "--kata", "parse", "--time-limit", "0.5")
    assert done.returncode == 1
    assert re.search(
        r"^stopped: 3 cases ran past the 0\.5 s limit; \d+ cases not run$", done.stdout, re.M
    )
    assert "got       no answer after 0.5 s: stopped" in done.stdout


def test_a_solution_deaf_to_the_timer_is_killed(tmp_path: Path) -> None:
    stubborn = (
        "import time\n\ndef agent_loop(chat, tools, question, max_iterations=5):\n"
        "    while True:\n        try:\n            time.sleep(60)\n"
        "        except BaseException:\n            pass\n"
    )
    done = check(tmp_path, "mine.py", stubborn, "--kata", "loop", "--time-limit", "0.5")
    assert done.returncode == 1
    assert re.search(
        r"^stopped: \"one city's weather\" ran past its 0\.5 s limit and did not yield to the "
        r"timer, so the grader was killed; \d+ cases not run$",
        done.stdout,
        re.M,
    ), done.stdout
    # The code printed nothing: toolcall's own warnings are not shown as its output.
    assert "what the code printed last" not in done.stdout, done.stdout


def test_a_solution_that_eats_memory_is_stopped(tmp_path: Path) -> None:
    eater = (
        "def build_schema(tools):\n    hoard = []\n    while True:\n"
        "        hoard.append('x' * 10_000_000)\n\n"
        "def validate_call(tools, call):\n    return {}, []\n"
    )
    done = check(tmp_path, "mine.py", eater, "--kata", "schema", "--memory", "256")
    assert done.returncode == 1
    assert re.search(
        r"^stopped: '.*' ran out of memory \(the limit is 256 MiB\); \d+ cases not run$",
        done.stdout,
        re.M,
    ), done.stdout


def test_a_solution_that_ends_its_process_is_reported(tmp_path: Path) -> None:
    exits = "import os\n\ndef parse_tool_calls(text):\n    os._exit(7)\n"
    done = check(tmp_path, "mine.py", exits, "--kata", "parse")
    assert done.returncode == 1
    assert "stopped: the grader process exited (code 7) during 'one call'" in done.stdout


def test_the_code_runs_in_another_process(tmp_path: Path) -> None:
    marker = tmp_path / "pid"
    spy = (
        f"import os\nopen({str(marker)!r}, 'w').write(str(os.getpid()))\n\n"
        "def parse_tool_calls(text):\n    return []\n"
    )
    check(tmp_path, "mine.py", spy, "--kata", "parse")
    assert marker.read_text() and int(marker.read_text()) != os.getpid()


def test_a_module_beside_the_file_does_not_shadow_the_standard_library(tmp_path: Path) -> None:
    (tmp_path / "json.py").write_text("raise RuntimeError('the wrong json')\n", encoding="utf-8")
    done = check(tmp_path, "kata_parse.py", solution(tmp_path, "parse"))
    assert done.returncode == 0, done.stdout


@pytest.mark.parametrize(
    ("source", "line"),
    [
        (
            "def parse_tool_calls(text)\n    return []\n",
            "mine.py, line 1: SyntaxError: expected ':'",
        ),
        (
            "def parse(text):\n    return []\n",
            "mine.py does not define parse_tool_calls (kata parse needs it)",
        ),
        ("raise SystemExit('bye')\n", "importing mine.py raised SystemExit: bye (mine.py, line 1)"),
    ],
    ids=["syntax error", "nothing to call", "exits on import"],
)
def test_a_file_that_cannot_be_used_says_why(tmp_path: Path, source: str, line: str) -> None:
    done = check(tmp_path, "mine.py", source, "--kata", "parse")
    assert done.returncode == 1
    assert line in done.stdout.splitlines()
    assert "✗ no case ran" in done.stdout


def test_usage_errors_are_one_line_and_exit_2(tmp_path: Path) -> None:
    unknown = toolcall("kata", "new", "regex", cwd=tmp_path)
    assert unknown.returncode == 2
    assert (
        unknown.stderr == "toolcall: error: no kata named 'regex'; the katas: "
        "request, prompt, parse, schema, stream, loop\n"
    )
    missing = toolcall("kata", "check", "absent.py", cwd=tmp_path)
    assert missing.returncode == 2 and "cannot read absent.py" in missing.stderr
    assert "kata new" not in missing.stderr
    # A kata's name where its file goes: the line names the file to give.
    named = toolcall("kata", "check", "parse", cwd=tmp_path)
    assert named.returncode == 2
    assert named.stderr == (
        "toolcall: error: cannot read parse: No such file or directory "
        "(FILE is your kata file: `toolcall kata new parse` writes kata_parse.py)\n"
    )
    (tmp_path / "other.py").write_text("x = 1\n", encoding="utf-8")
    unclear = toolcall("kata", "check", "other.py", cwd=tmp_path)
    assert unclear.returncode == 2 and "give --kata KATA" in unclear.stderr


def test_the_command_line_loads_no_kata_machinery_until_a_kata_command_runs() -> None:
    """`toolcall --help` stays fast: the batteries, the offline model and the reference
    solutions are imported by the grader process, and `kata` imports its package lazily."""
    import subprocess
    import sys

    probe = (
        "import sys; import toolcall_cli.cli; "
        "print(sorted(m for m in sys.modules if m.startswith('toolcall_cli.kata')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"
