"""The runs compare and replay make are kept apart from the user's own: they never push the
user's runs out of the trace directory, `-1` never means one of them, and `trace list` marks
them (`--all`). And `trace list` itself: `-n` (default 20), and `--json` one object a line."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from in_process import Finished, toolcall

from toolcall_cli.trace.files import trace_dir, trace_files

ANSI = re.compile(r"\x1b\[[0-9;?]*[a-zA-Z]")
QUESTIONS = ("What's 2+2?", "北京今天适合穿短袖吗？", "What's 12*5+3?")


def own_runs(tmp_path: Path) -> list[Path]:
    """Three runs of the user's own, oldest first."""
    for question in QUESTIONS:
        assert toolcall("run", question, "--quiet", cwd=tmp_path).returncode == 0
    return trace_files(trace_dir())


def keeping(tmp_path: Path, keep: int) -> dict[str, str]:
    config = tmp_path / "config.toml"
    config.write_text(f"[defaults]\ntrace_keep = {keep}\n", encoding="utf-8")
    return {"TOOLCALL_CONFIG": str(config)}


def json_lines(done: Finished) -> list[dict[str, object]]:
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_many_compares_then_replay_minus_one_replays_the_user_s_last_run(tmp_path: Path) -> None:
    env = keeping(tmp_path, 5)
    mine = own_runs(tmp_path)
    for _ in range(3):  # 3 x 5 strategies x 4 seeds: 60 runs, past the 5 kept
        done = toolcall("compare", "What's 1+1?", "--repeat", "4", "--json", cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stderr
    assert trace_files(trace_dir()) == mine  # every one of the user's runs is still there
    assert len(trace_files(trace_dir() / "compare")) == 5  # compare's pruned on their own
    done = toolcall("replay", "-1", "--json", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    replayed = json.loads(done.stdout)
    assert replayed["recording"] == str(mine[-1])
    assert [q["question"] for q in replayed["questions"]] == [QUESTIONS[-1]]
    # ... and a second `replay -1` replays it again, not the first replay
    again = json.loads(toolcall("replay", "-1", "--json", cwd=tmp_path, env=env).stdout)
    assert again["recording"] == str(mine[-1])
    assert Path(again["replay_trace"]).parent == trace_dir() / "replay"
    assert trace_files(trace_dir()) == mine


def test_replays_are_pruned_on_their_own(tmp_path: Path) -> None:
    env = keeping(tmp_path, 2)
    mine = own_runs(tmp_path)  # three, past the two kept: a replay prunes only replays
    for _ in range(3):
        assert toolcall("replay", "-1", cwd=tmp_path, env=env).returncode == 0
    assert trace_files(trace_dir()) == mine
    assert len(trace_files(trace_dir() / "replay")) == 2


def test_the_latest_is_the_user_s_run_for_trace_show_and_doctor(tmp_path: Path) -> None:
    *_, newest = own_runs(tmp_path)
    assert toolcall("compare", "What's 1+1?", cwd=tmp_path).returncode == 0
    shown = toolcall("trace", "show", "--json", cwd=tmp_path)
    assert json.loads(shown.stdout.splitlines()[0])["kind"] == "trace_header"
    started = [json.loads(line) for line in shown.stdout.splitlines()][1]
    assert started["question"] == QUESTIONS[-1]
    doctor = json.loads(toolcall("doctor", "--json", cwd=tmp_path).stdout)
    assert doctor["trace"] == str(newest)


def test_a_kept_apart_run_is_still_found_by_its_id(tmp_path: Path) -> None:
    done = toolcall("compare", "What's 1+1?", "--json", cwd=tmp_path)
    first = Path(json.loads(done.stdout)["runs"][0]["trace"])
    shown = toolcall("trace", "show", first.stem, "--json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout.splitlines()[0])["command"] == "compare"


def test_trace_list_lists_the_user_s_runs_and_marks_the_rest_with_all(tmp_path: Path) -> None:
    own_runs(tmp_path)
    assert toolcall("compare", "What's 1+1?", cwd=tmp_path).returncode == 0
    assert toolcall("replay", "-1", cwd=tmp_path).returncode == 0
    mine = json_lines(toolcall("trace", "list", "--json", cwd=tmp_path))
    assert [row["question"] for row in mine] == list(reversed(QUESTIONS))
    assert {row["command"] for row in mine} == {"run"}
    every = json_lines(toolcall("trace", "list", "--all", "--json", cwd=tmp_path))
    assert [row["command"] for row in every] == ["replay"] + ["compare"] * 5 + ["run"] * 3
    piped = toolcall("trace", "list", "--all", cwd=tmp_path).stdout.splitlines()
    assert [line.split()[1] for line in piped] == ["replay"] + ["compare"] * 5 + ["run"] * 3


def test_in_a_terminal_trace_list_says_what_it_left_out(tmp_path: Path) -> None:
    own_runs(tmp_path)
    assert toolcall("compare", "What's 1+1?", cwd=tmp_path).returncode == 0
    terminal = {"TTY_COMPATIBLE": "1", "COLUMNS": "200"}
    done = toolcall("trace", "list", "-n", "2", cwd=tmp_path, env=terminal)
    lines = [ANSI.sub("", line).rstrip() for line in done.stdout.splitlines()]
    assert lines[0] == f"2 of 3 traces in {trace_dir()}"
    assert lines[-1] == (
        "and 5 runs of compare and replay, kept apart from yours: `toolcall trace list --all`"
    )
    every = toolcall("trace", "list", "--all", cwd=tmp_path, env=terminal).stdout
    listed = ANSI.sub("", every).splitlines()
    assert listed[0].rstrip() == f"8 traces in {trace_dir()}"
    assert listed[1].split()[:3] == ["id", "command", "when"]


def test_trace_list_shows_the_newest_twenty_unless_told(tmp_path: Path) -> None:
    [recorded] = own_runs(tmp_path)[-1:]
    for second in range(25):  # the same run under 25 names, a second apart
        shutil.copy(recorded, trace_dir() / f"20250102-0304{second:02d}-000000.jsonl")
    newest = sorted(trace_files(trace_dir()), reverse=True)
    listed = json_lines(toolcall("trace", "list", "--json", cwd=tmp_path))
    assert [row["path"] for row in listed] == [str(path) for path in newest[:20]]
    three = json_lines(toolcall("trace", "list", "-n", "3", "--json", cwd=tmp_path))
    assert [row["path"] for row in three] == [str(path) for path in newest[:3]]
    every = json_lines(toolcall("trace", "list", "-n", "0", "--json", cwd=tmp_path))
    assert len(every) == 28
    piped = toolcall("trace", "list", "--limit", "4", cwd=tmp_path).stdout.splitlines()
    assert [line.split()[0] for line in piped] == [path.stem for path in newest[:4]]


def test_trace_list_json_is_one_object_a_line_as_its_help_says(tmp_path: Path) -> None:
    own_runs(tmp_path)
    done = toolcall("trace", "list", "--json", cwd=tmp_path)
    lines = done.stdout.splitlines()
    assert len(lines) == 3 and all(json.loads(line)["command"] == "run" for line in lines)
    helped = " ".join(toolcall("trace", "list", "--help", cwd=tmp_path).stdout.split())
    assert "One JSON object per trace, one a line" in helped


def test_minus_one_with_only_kept_apart_runs_says_they_are_named_by_id(tmp_path: Path) -> None:
    assert toolcall("compare", "What's 1+1?", cwd=tmp_path).returncode == 0
    done = toolcall("replay", "-1", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert f"no runs of your own yet in {trace_dir()}; the 5 of compare and replay" in done.stderr
    assert "name one by its id (`toolcall trace list --all`)" in done.stderr


def test_compare_s_trace_dir_help_names_where_its_runs_go_by_default(tmp_path: Path) -> None:
    helped = " ".join(toolcall("compare", "--help", cwd=tmp_path).stdout.split())
    assert "instead of compare's own folder in the trace directory" in helped
