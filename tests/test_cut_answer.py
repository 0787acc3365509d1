"""An answer the model stopped writing at the token limit (finish_reason "length") is still the
run's answer, but its end may be missing: the view, --quiet's stderr, the JSON events, --explain
and the doctor each say so, where before it read as whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from in_process import Finished, toolcall

CUT = "The weather in Paris is sunny with a high of"
MARK = "cut at the token limit, so its end may be missing"


def played(tmp_path: Path, question: str, reply: dict[str, Any], *flags: str) -> Finished:
    """`toolcall run` on a scripted model whose one reply is `reply`."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps([reply], ensure_ascii=False), encoding="utf-8")
    args = ("run", question, "-m", "scripted", "--script", str(script), "--no-trace", *flags)
    return toolcall(*args, cwd=tmp_path)


def cut(text: str = CUT) -> dict[str, Any]:
    return {"content": text, "finish_reason": "length"}


@pytest.mark.parametrize("finish", ["length", "stop"])
def test_the_view_marks_an_answer_cut_at_the_token_limit_and_no_other(
    tmp_path: Path, finish: str
) -> None:
    done = played(tmp_path, "Tell me about Paris.", {"content": CUT, "finish_reason": finish})
    assert done.returncode == 0, done.stderr
    assert f"answer: {CUT}" in done.stdout or f"): {CUT}" in done.stdout
    assert (MARK in done.stdout) is (finish == "length")


def test_quiet_prints_the_answer_and_says_on_stderr_that_it_was_cut(tmp_path: Path) -> None:
    done = played(tmp_path, "Tell me about Paris.", cut(), "--quiet")
    assert done.returncode == 0
    assert done.stdout.strip() == CUT
    assert f"toolcall: the answer was {MARK} (--max-tokens)" in done.stderr


def test_the_json_events_carry_the_mark(tmp_path: Path) -> None:
    done = played(tmp_path, "Tell me about Paris.", cut(), "--json")
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    [final] = [e for e in events if e["kind"] == "final_answer"]
    assert final["cut"] is True and final["text"] == CUT


def test_explain_names_the_token_limit_in_the_questions_language(tmp_path: Path) -> None:
    done = played(tmp_path, "介绍一下巴黎。", cut("巴黎是法国的首都，也是"), "--explain")
    assert "finish_reason 为 length" in done.stdout
    assert "--max-tokens" in done.stdout


def test_the_doctor_finds_a_cut_answer_and_points_at_the_limit(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([cut()]), encoding="utf-8")
    trace = tmp_path / "trace.jsonl"
    run = ("run", "Tell me about Paris.", "-m", "scripted", "--script", str(script))
    assert toolcall(*run, "--trace", str(trace), "-q", cwd=tmp_path).returncode == 0
    done = toolcall("doctor", str(trace), "--json", cwd=tmp_path)
    assert done.returncode == 4, done.stderr
    data = json.loads(done.stdout)
    [ending] = [s for s in data["runs"][0]["steps"] if s["step"] == 4]
    assert [f["problem"] for f in ending["findings"]] == ["cut_answer"]
    assert data["runs"][0]["fix"]["kind"] == "limit"
    assert "--max-tokens" in data["runs"][0]["fix"]["text"]
