"""Real model outputs, parsed whole, per character and per given split: the repository's own
(toolcall_cli/data/real_outputs.jsonl, every clone) and an outside corpus copied from public test
suites (when TOOLCALL_CONFORMANCE_DIR names it; tests/conformance.py)."""

from __future__ import annotations

import collections
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conformance import OWN_CORPUS, cases, needs, own_cases, params, real_outputs

from toolcall_cli.strategies.text_parser import CallTextParser, ParsedText, parse_text

CORPUS = "corpus.jsonl"
POLICY_FILE = Path(__file__).with_name("conformance_policy.json")
MAKER = Path(__file__).resolve().parents[1] / "bench" / "make_real_outputs.py"

OUTSIDE_CASES = cases(CORPUS)
POLICY: dict[str, str] = json.loads(POLICY_FILE.read_text(encoding="utf-8"))
"""Outside cases whose source expects what toolcall decides otherwise, and why."""
# "other" formats we parse; the rest of "other" must be in the policy file.
SUPPORTED_OTHER = {
    "llamacpp-hermes-function-eq",
    "llamacpp-hermes-function-name-attr",
    "llamacpp-hermes-two-function-eq",
    "cit-qwen3-xml-llamacpp-coder-unicode-cjk",
}
TEXT_FORMATS = ("hermes_tags", "raw_json", "other")
CASES = [c for c in OUTSIDE_CASES if c["format"] in TEXT_FORMATS]


def in_text(case: dict[str, Any]) -> bool:
    return bool(case["format"] in TEXT_FORMATS)


def conforms(case: dict[str, Any], parsed: ParsedText) -> list[str]:
    """Where our parse differs from what the case's source expects (empty when it agrees)."""
    problems = []
    calls = [{"name": c.name, "arguments": c.arguments} for c in parsed.calls]
    if calls != case["expected_calls"]:
        problems.append(f"calls {calls!r} != {case['expected_calls']!r}")
    expected_text = case["expected_content"]
    if expected_text is not None and parsed.text.strip() != expected_text.strip():
        problems.append(f"text {parsed.text!r} != {expected_text!r}")
    expected_reasoning = case.get("expected_reasoning")
    if expected_reasoning is not None and parsed.reasoning.strip() != expected_reasoning.strip():
        problems.append(f"reasoning {parsed.reasoning!r} != {expected_reasoning!r}")
    return problems


def parse_chunks(chunks: list[str]) -> ParsedText:
    parser = CallTextParser()
    for chunk in chunks:
        parser.feed(chunk)
    parser.close()
    return ParsedText(parser.text, tuple(parser.calls), tuple(parser.errors), parser.reasoning)


@pytest.mark.parametrize("case", real_outputs(lambda c: in_text(c) and c["id"] not in POLICY))
def test_case_parses_as_its_source_expects(case: dict[str, Any]) -> None:
    if case["format"] == "other":
        assert case["id"] in SUPPORTED_OTHER, "unsupported 'other' case missing from the policy"
    assert conforms(case, parse_text(case["text"])) == []


@pytest.mark.parametrize("case", params(CORPUS, [c for c in CASES if c["id"] in POLICY]))
def test_policy_case_really_differs(case: dict[str, Any]) -> None:
    # A policy entry that we now conform to should be taken off the list.
    assert conforms(case, parse_text(case["text"])) != []


@pytest.mark.parametrize("case", real_outputs(in_text))
def test_case_streamed_per_character_equals_batch(case: dict[str, Any]) -> None:
    assert parse_chunks(list(case["text"])) == parse_text(case["text"])


@pytest.mark.parametrize("case", params(CORPUS, [c for c in CASES if "chunks" in c]))
def test_case_streamed_in_its_own_chunks_equals_batch(case: dict[str, Any]) -> None:
    assert "".join(case["chunks"]) == case["text"]
    assert parse_chunks(case["chunks"]) == parse_text(case["text"])


@needs(CORPUS)
def test_every_policy_id_is_in_the_corpus() -> None:
    ids = {c["id"] for c in OUTSIDE_CASES}
    assert set(POLICY) - ids == set()
    assert all(reason.strip() for reason in POLICY.values())


@needs(CORPUS)
def test_every_unsupported_other_case_is_in_the_policy() -> None:
    others = {c["id"] for c in CASES if c["format"] == "other"}
    assert others - SUPPORTED_OTHER - set(POLICY) == set()


@needs(CORPUS)
def test_truncated_cases_report_a_truncated_error_and_leak_no_markup() -> None:
    truncated = [c for c in CASES if "expected_error" in c]
    assert truncated, "the corpus should hold cut-off replies"
    for case in truncated:
        parsed = parse_text(case["text"])
        assert [e.truncated for e in parsed.errors] == [True], case["id"]
        assert "<tool_call>" not in parsed.text, case["id"]


# --- the repository's own real outputs -------------------------------------------------------


def test_the_own_corpus_is_what_the_recordings_make(tmp_path: Path) -> None:
    """toolcall_cli/data/real_outputs.jsonl is made, not edited: bench/make_real_outputs.py makes it
    again, byte for byte, from the recordings in bench/results."""
    made = tmp_path / "real_outputs.jsonl"
    done = subprocess.run(
        [sys.executable, str(MAKER), str(made)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert made.read_bytes() == OWN_CORPUS.read_bytes()


def test_the_own_corpus_holds_every_kind_and_names_each_source() -> None:
    own = own_cases()
    kinds = collections.Counter((c["format"], "+".join(c["categories"])) for c in own)
    assert {kind: count >= 20 for kind, count in kinds.items()} == {
        ("raw_json", "single_call+no_tags"): True,
        ("raw_json", "single_call+code_fence"): True,
        ("raw_json", "no_call"): True,
        ("openai_tool_calls_json", "native_message"): True,
    }
    assert len({c["id"] for c in own}) == len(own)
    assert all(c["source"].startswith("bench/results/") and c["model"] for c in own)
    assert not {c["id"] for c in own} & set(POLICY)  # the policy speaks of outside cases only
