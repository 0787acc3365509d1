"""`toolcall drill`: each topic's demonstration is a real offline run that shows the fault or
limit the question is about; answers and marks come from stdin or prompt-toolkit; the score
counts the points marked; --list, and an unknown topic as one line and exit 2."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from in_process import toolcall
from prompt_toolkit import PromptSession
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from toolcall_cli.cli._drilling import TerminalInput, run_drill
from toolcall_cli.drill import TOPICS, find_topic

NAMES = [topic.name for topic in TOPICS]

SHOWS: dict[str, tuple[str, ...]] = {
    "ending": ("answer: 12*7 = 84", "stopped after 1 iteration", "stopped: limit"),
    "tool-error": (
        "error tool_error",
        "division by zero",
        "error invalid_arguments",
        "answer: Shanghai today",
    ),
    "parallel": ('call get_weather {"city": "Shanghai"', 'call get_weather {"city": "Beijing"'),
    "malicious": (
        "error unknown_tool",
        "` left out: convert_units does not take it",  # whichever name the fault invents
        "answer: 5 km = 3.11 mi",
    ),
    "hard-answer": ("0 tool calls", "answered without calling any tool"),
    "endless-loop": (
        "repeated call: earlier result reused",
        "stopped after 2 iterations",
        "stopped: limit",
    ),
    "long-result": ("cut from 307 to 100 characters", "result cut: showing 100 of 307"),
    "strategies": ("regex ", "schema tools ", "schema json ", "schema required ", "stream tags "),
}
"""What each demonstration's output shows: the fault or limit its topic is about."""

ENGLISH = {"LC_ALL": None, "LC_MESSAGES": None, "LANG": "en_US.UTF-8"}


def drill(tmp_path: Path, *args: str, stdin: str, env: dict[str, str | None] = ENGLISH) -> str:
    done = toolcall("drill", *args, cwd=tmp_path, stdin=stdin, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_every_topic_has_what_its_demonstration_shows() -> None:
    assert set(SHOWS) == set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_each_topic_runs_its_demonstration_and_shows_its_fault_or_limit(
    tmp_path: Path, name: str
) -> None:
    topic = find_topic(name)
    marks = ["y", "n"] + ["n"] * (len(topic.points) - 2)
    out = drill(tmp_path, "--topic", name, stdin="\n".join(["my answer", "", *marks]) + "\n")
    assert topic.question.en in out
    for demo in topic.demos:
        assert f"$ toolcall {demo.command} " in out
        assert " ".join(demo.flags) in out
    for shown in SHOWS[name]:
        assert shown in out, f"{shown!r} not in:\n{out}"
    for point in topic.points:
        assert point.en in out
    assert f"Score for this question: 1/{len(topic.points)}" in out


def test_parallel_results_go_back_each_with_its_own_call_id(tmp_path: Path) -> None:
    out = drill(tmp_path, "--topic", "parallel", stdin="")
    ids = re.findall(r"^\s+tool \[(call_\w+)\]", out, re.MULTILINE)
    assert len(ids) == 2 and ids[0] != ids[1], out


def test_a_skipped_answer_still_runs_the_demonstration_and_asks_no_marks(tmp_path: Path) -> None:
    out = drill(tmp_path, "--topic", "hard-answer", stdin="\n")
    assert "(skipped)" in out
    assert "answered without calling any tool" in out
    assert "Did you cover it?" not in out
    assert f"Score for this question: 0/{len(find_topic('hard-answer').points)}" in out


def test_the_whole_drill_asks_every_topic_and_totals_the_marks(tmp_path: Path) -> None:
    # The first topic answered with every point marked, the rest skipped (input ends).
    first = TOPICS[0]
    stdin = "\n".join(["the model stops", "", *["y"] * len(first.points)]) + "\n"
    out = drill(tmp_path, stdin=stdin)
    for number, topic in enumerate(TOPICS, 1):
        assert f"== {number}/{len(TOPICS)} {topic.name} ==" in out
    possible = sum(len(topic.points) for topic in TOPICS)
    covered = len(first.points)
    assert f"Total: {covered}/{possible} ({covered * 100 // possible}%)" in out


def test_the_locale_picks_chinese_and_lang_overrides_it(tmp_path: Path) -> None:
    chinese = {**ENGLISH, "LANG": "zh_CN.UTF-8"}
    topic = find_topic("tool-error")
    out = drill(tmp_path, "--topic", topic.name, stdin="", env=chinese)
    assert topic.question.zh in out and topic.question.en not in out
    assert "question: 计算 1/0" in out  # the demonstration asks in Chinese too
    out = drill(tmp_path, "--topic", topic.name, "--lang", "en", stdin="", env=chinese)
    assert topic.question.en in out and topic.question.zh not in out


def test_list_names_every_topic(tmp_path: Path) -> None:
    out = drill(tmp_path, "--list", stdin="")
    listed = [line.split()[0] for line in out.splitlines()]
    assert listed == NAMES


def test_the_strategies_topic_is_named_so_and_names_the_three_strategies(tmp_path: Path) -> None:
    # The product calls them strategies; the old id `schemes` (kept interview records name it)
    # still finds the topic. Its points name regex, schema and stream, each its own option.
    topic = find_topic("strategies")
    assert find_topic("schemes") is topic
    assert "schemes" not in NAMES
    firsts = [point.en.split()[0] for point in topic.points]
    assert firsts[:3] == ["regex", "schema", "stream"]
    out = drill(tmp_path, "--topic", "schemes", stdin="")
    assert "== 8/8 strategies ==" in out


def test_an_unknown_topic_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = toolcall("drill", "--topic", "nope", cwd=tmp_path, stdin="")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"toolcall: error: no drill topic named 'nope'; the topics: {', '.join(NAMES)}"
    ]
    assert done.stdout == ""


def test_a_terminal_answer_is_typed_through_prompt_toolkit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    topic = find_topic("endless-loop")
    with create_pipe_input() as pipe:
        # Two lines of answer, an empty line to end it, two points marked, then Ctrl-D.
        pipe.send_text("最大轮数\n重复调用直接返回上次结果\n\ny\n是\n\x04")
        answers = TerminalInput(PromptSession(input=pipe, output=DummyOutput()))
        [marked] = run_drill([topic], answers, "zh")
    out = capsys.readouterr().out
    assert marked.covered == 2
    assert topic.question.zh in out
    assert "repeated call: earlier result reused" in out
    assert f"本题得分: 2/{len(topic.points)}" in out
