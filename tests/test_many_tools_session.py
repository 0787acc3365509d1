"""A session of over 200 tools (the catalogue in examples/catalogue beside the bundled tools):
each request carries at most K of them, and the bundled tools' questions get the same answers
as in a session of the bundled tools alone."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from in_process import toolcall

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = ROOT / "examples" / "catalogue"
BUNDLED = {"get_weather", "get_time", "calculate", "convert_units"}
K = 6


def bundled_questions() -> list[str]:
    table = tomllib.loads((CATALOGUE / "questions.toml").read_text(encoding="utf-8"))
    return [item["question"] for item in table["questions"] if item["tool"] in BUNDLED]


def events_of(*args: str, cwd: Path) -> list[dict[str, Any]]:
    done = toolcall("run", "--json", "--no-trace", "--strategy", "schema", *args, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def answer_of(events: list[dict[str, Any]]) -> str:
    answers = [event["text"] for event in events if event["kind"] == "final_answer"]
    assert len(answers) == 1
    # The clock's answers read the clock: the seconds may tick between the two runs.
    return re.sub(r"\d{2}:\d{2}:\d{2}", "hh:mm:ss", answers[0])


def test_the_catalogue_and_the_bundled_tools_make_a_session_of_over_200() -> None:
    assert len(bundled_questions()) >= 8
    done = toolcall("tools", "--tools", str(CATALOGUE), cwd=ROOT)
    assert done.returncode == 0 and not done.stderr
    assert len([line for line in done.stdout.splitlines() if "(" in line]) > 200


@pytest.mark.parametrize("question", bundled_questions())
def test_a_bundled_question_is_answered_as_well_with_200_tools_sent_k_at_a_time(
    question: str, tmp_path: Path
) -> None:
    alone = events_of(question, cwd=tmp_path)
    many = events_of("--tools", str(CATALOGUE), "--retrieve", str(K), question, cwd=tmp_path)
    requests = [event["request"] for event in many if event["kind"] == "iteration_started"]
    assert requests and all(len(body.get("tools", [])) <= K for body in requests)
    chosen = [event for event in many if event["kind"] == "tools_chosen"]
    assert chosen and all(event["total"] > 200 for event in chosen)
    # The same call as with the bundled tools alone, and its answer; the offline model may also
    # try a near neighbour the request carried (convert_area takes value/from_unit/to_unit too),
    # and say that one failed.
    assert calls_of(alone) <= calls_of(many)
    assert answer_of(alone) in answer_of(many)


def calls_of(events: list[dict[str, Any]]) -> set[str]:
    return {
        json.dumps([event["call"]["name"], event["call"]["arguments"]], sort_keys=True)
        for event in events
        if event["kind"] == "tool_call_parsed"
    }
