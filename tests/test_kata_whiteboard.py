"""The katas that cover the rest of the whiteboard answer - the request (`kata request`) and the
text protocol's system prompt (`kata prompt`) - the whiteboard-sized references, and the timed
mock interview (`kata interview`) with its score history."""

from __future__ import annotations

import json
import random
import re
import time
from pathlib import Path

import pytest
from in_process import toolcall
from prompt_toolkit import PromptSession
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from test_kata import cells, check, solution

from toolcall_cli.cli._drilling import Prompt, TerminalInput
from toolcall_cli.cli._interviewing import Interview
from toolcall_cli.kata import KATAS, NAMES, find_kata, short_text
from toolcall_cli.kata._catalog import SHORT_LINES
from toolcall_cli.kata._follower import Intended, PromptFollower, call_shape
from toolcall_cli.kata._scores import best_scores, scores_path

# --- the whiteboard-sized references ---------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_each_short_reference_fits_a_whiteboard_and_fails_only_what_it_says(
    tmp_path: Path, name: str
) -> None:
    kata = find_kata(name)
    done = toolcall("kata", "solution", name, "--short", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == short_text(kata)
    assert len(done.stdout.splitlines()) <= SHORT_LINES
    graded = check(tmp_path, kata.file_name, done.stdout, "--kata", name)
    table = cells(graded.stdout)
    assert table, graded.stdout
    failing = {category for category, row in table.items() if not row[3].startswith("✓")}
    assert failing == set(kata.short_fails), graded.stdout
    docstring = done.stdout.split('"""')[1]
    if kata.short_fails:
        assert "interview" in docstring and "fail" in docstring.lower()
    else:
        assert "passes every check" in docstring
        assert graded.returncode == 0, graded.stdout


# --- kata request ----------------------------------------------------------------------------


def test_arguments_sent_back_as_an_object_fail_the_request_shape(tmp_path: Path) -> None:
    source = solution(tmp_path, "request").replace(
        '"arguments": json.dumps(call["arguments"], ensure_ascii=False)',
        '"arguments": call["arguments"]',
    )
    done = check(tmp_path, "kata_request.py", source, "--kata", "request")
    assert done.returncode == 1
    assert not cells(done.stdout)["history"][3].startswith("✓")
    assert cells(done.stdout)["first request"][3].startswith("✓")
    assert "arguments" in done.stdout and "is not of type 'string'" in done.stdout


def test_a_body_of_the_right_shape_is_still_sent_to_serve_which_may_refuse_it(
    tmp_path: Path,
) -> None:
    # Two choices per request: the shape allows it, toolcall serve (one choice) refuses it.
    source = solution(tmp_path, "request").replace(
        'body: dict[str, Any] = {"model": model, "messages": messages}',
        'body: dict[str, Any] = {"model": model, "messages": messages, "n": 2}',
    )
    done = check(tmp_path, "kata_request.py", source, "--kata", "request")
    assert done.returncode == 1
    assert "toolcall serve answers it (200)" in done.stdout
    assert "400: this server writes one choice" in done.stdout


def test_optional_without_null_and_defaults_left_unsaid_fail_their_rows(tmp_path: Path) -> None:
    source = (
        solution(tmp_path, "request")
        .replace('options.append({"type": "null"})', "pass")
        .replace('schema["default"] = parameter.default', "pass")
    )
    done = check(tmp_path, "kata_request.py", source, "--kata", "request")
    table = cells(done.stdout)
    assert not table["types"][3].startswith("✓")
    assert not table["required and defaults"][3].startswith("✓")
    assert table["descriptions"][3].startswith("✓")


# --- kata prompt -----------------------------------------------------------------------------

WEAK_PROMPT = """
import json


def system_prompt(tools):
    return (
        "You can use these tools: " + json.dumps(tools) + "\\n"
        'Call one like <tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}'
        "</tool_call>"
    )
"""


def test_a_prompt_without_the_tool_layout_or_several_calls_loses_calls(tmp_path: Path) -> None:
    done = check(tmp_path, "kata_prompt.py", WEAK_PROMPT, "--kata", "prompt")
    assert done.returncode == 1
    table = cells(done.stdout)
    assert not table["offline model"][3].startswith("✓")  # it reads the `# Tools` layout
    assert not table["prompt follower"][3].startswith("✓")  # never told it may call twice
    assert re.search(r"got\s+1 of 2 came back parseable", done.stdout), done.stdout


def test_the_follower_writes_calls_only_as_the_prompt_shows_them() -> None:
    plans = {"Tokyo tomorrow?": (Intended("get_weather", {"city": "Tokyo", "day": "tomorrow"},
                                          listed=("day",)),)}  # fmt: skip
    follower = PromptFollower(plans)
    shown = 'get_weather(city, day): <call>{"tool": "x", "args": {"city": "Oslo"}}</call>'
    shape = call_shape(shown)
    assert shape is not None and (shape.tag, shape.name_key, shape.arguments_key) == (
        "call",
        "tool",
        "args",
    )
    reply = follower(shown, "Tokyo tomorrow?")
    assert reply == '<call>{"tool": "get_weather", "args": {"city": "Tokyo"}}</call>'
    listed = shown + ' day is "today" or "tomorrow"'
    assert '"day": "tomorrow"' in follower(listed, "Tokyo tomorrow?")
    assert "<" not in follower("Tools: get_weather(city). Call them.", "Tokyo tomorrow?")


def test_tool_definitions_in_tags_are_not_taken_for_the_example_call() -> None:
    # Qwen's and Hermes' own templates list the tools as JSON in <tools> before the example
    # call; {"type": "function", "function": {...}} has a string and an object key too.
    tools = json.dumps({"type": "function", "function": {"name": "get_weather"}})
    prompt = (
        f"<tools>\n{tools}\n</tools>\nCall a tool as "
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'
    )
    shape = call_shape(prompt)
    assert shape is not None
    assert (shape.tag, shape.name_key, shape.arguments_key) == ("tool_call", "name", "arguments")


# --- kata interview --------------------------------------------------------------------------


class Clock:
    """Time passes only as the scripted candidate takes it."""

    now = 1000.0

    def __call__(self) -> float:
        return self.now


class Candidate:
    """Lines typed at the interview's prompts, each after so many minutes; then the input ends."""

    def __init__(self, clock: Clock, script: list[tuple[str, float]]) -> None:
        self.clock, self.script = clock, script

    def line(self, prompt: Prompt, *, ends_in: float | None = None) -> str | None:
        if not self.script:
            return None
        shown = prompt() if callable(prompt) else prompt  # the clock as the prompt opened
        text, minutes = self.script.pop(0)
        self.clock.now += minutes * 60
        print(f"{shown}{text}")
        return text


def write_stage_files(directory: Path, names: tuple[str, ...]) -> None:
    directory.mkdir()
    for name in names:
        kata = find_kata(name)
        text = toolcall("kata", "solution", name, cwd=directory).stdout
        (directory / kata.file_name).write_text(text, encoding="utf-8")


def test_the_interview_runs_out_of_time_grades_every_file_and_keeps_the_score(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = tmp_path / "work"
    write_stage_files(work, ("request", "parse"))  # the loop never written: time ran out
    (work / "kata_loop.py").write_text("def agent_loop(*a):\n    return None\n", "utf-8")
    clock = Clock()
    # Enter checks the file: request after 5 min, parse after 10 more, the loop twice, and by
    # then 50 minutes have gone. Then one follow-up answered, two of its points marked.
    script: list[tuple[str, float]] = [
        ("", 5),
        ("", 10),
        ("", 20),
        ("", 15),
        ("an answer", 0),
        ("", 0),
        ("y", 0),
    ]
    script.append(("y", 0))
    interview = Interview(work, Candidate(clock, script), clock=clock, rng=random.Random(1))
    scores = interview.run()
    out = capsys.readouterr().out
    assert re.search(r"\[\d\d:\d\d left\] request", out)
    assert "time is up" in out
    assert "graded as your files stand, after 45 min 0 s" in out
    assert [(s.kata, s.passed == s.total) for s in scores] == [
        ("request", True),
        ("parse", True),
        ("loop", False),
    ]
    assert out.count("A strong answer covers:") == 3
    assert "follow-ups 2/" in out
    history = [json.loads(line) for line in scores_path().read_text("utf-8").splitlines()]
    assert history[-1]["kind"] == "interview" and history[-1]["seconds"] == 45 * 60
    assert best_scores()["request"].via == "interview"
    listed = toolcall("kata", "list", cwd=tmp_path).stdout
    assert re.search(r"best: 24/24 in 45 min 0 s \(interview\)", listed), listed
    assert "best: not checked yet" in listed  # prompt, never tried


class Interrupting(Candidate):
    """A candidate who presses Ctrl-C once the script is done."""

    def line(self, prompt: Prompt, *, ends_in: float | None = None) -> str | None:
        if not self.script:
            raise KeyboardInterrupt
        return super().line(prompt, ends_in=ends_in)


def test_a_ctrl_c_in_the_follow_ups_keeps_the_graded_stages(tmp_path: Path) -> None:
    work = tmp_path / "work"
    write_stage_files(work, ("request",))
    clock = Clock()
    interview = Interview(work, Interrupting(clock, [("", 1), ("end", 1)]), clock=clock)
    with pytest.raises(KeyboardInterrupt):
        interview.run()
    best = best_scores()["request"]
    assert (best.passed, best.via) == (best.total, "interview")


def test_at_a_terminal_the_prompt_ends_when_the_time_is_up_and_its_clock_runs() -> None:
    # The candidate sits at the prompt: the time must run out there, not at the next Enter
    # (the clock it showed stood still, and files edited after the time were graded).
    asked: list[float] = []

    def prompt() -> str:
        asked.append(time.monotonic())
        return "[00:01 left] > "

    with create_pipe_input() as pipe:
        answers = TerminalInput(PromptSession(input=pipe, output=DummyOutput()))
        started = time.monotonic()
        assert answers.line(prompt, ends_in=1.5) is None
    assert 1.4 < time.monotonic() - started < 5
    assert len(asked) >= 2, "the prompt was written once: its clock stood still"


def test_the_interview_command_writes_three_starters_and_ends_on_the_input(
    tmp_path: Path,
) -> None:
    done = toolcall("kata", "interview", "iv", "--minutes", "45", cwd=tmp_path, stdin="end\n")
    assert done.returncode == 0, done.stderr
    for name in ("request", "parse", "loop"):
        assert (tmp_path / "iv" / f"kata_{name}.py").is_file()
    assert "45 minutes for request → parse → loop" in done.stdout
    # The clock runs from the start: a loaded machine may take a second or more to the prompt.
    assert re.search(r"\[(45:00|44:[0-5]\d) left\] request", done.stdout), done.stdout
    again = toolcall("kata", "interview", "iv", cwd=tmp_path, stdin="end\n")
    assert again.returncode == 2 and "exists already" in again.stderr


def test_a_check_is_kept_as_a_score_with_its_time(tmp_path: Path) -> None:
    assert toolcall("kata", "new", "prompt", cwd=tmp_path).returncode == 0
    starter = (tmp_path / "kata_prompt.py").read_text("utf-8")
    body = solution(tmp_path, "prompt").split('"""', 2)[2]
    (tmp_path / "kata_prompt.py").write_text(starter.split("\n", 1)[0] + "\n" + body, "utf-8")
    done = toolcall("kata", "check", "kata_prompt.py", cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    best = best_scores()["prompt"]
    assert (best.passed, best.via) == (best.total, "check") and best.seconds is not None
    scores_path().write_text(scores_path().read_text("utf-8") + "not json\n[1]\n", "utf-8")
    assert toolcall("kata", "list", cwd=tmp_path).returncode == 0  # a broken line is skipped


def test_every_kata_names_its_strategy_by_the_strategy_names() -> None:
    assert {k.strategy for k in KATAS} <= {"regex", "schema", "stream", "loop"}
    for kata in KATAS:
        assert "scheme" not in short_text(kata).lower()
