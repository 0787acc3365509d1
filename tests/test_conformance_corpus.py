"""Real model outputs from public test suites, parsed whole, per character and per given split."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conformance import cases, needs, params

from toolcall_cli.strategies.textcalls import CallTextParser, ParsedText, parse_text

CORPUS = "corpus.jsonl"
POLICY_FILE = Path(__file__).with_name("conformance_policy.json")
pytestmark = needs(CORPUS)

ALL_CASES = cases(CORPUS)
POLICY: dict[str, str] = json.loads(POLICY_FILE.read_text(encoding="utf-8"))
# "other" formats we parse; the rest of "other" must be in the policy file.
SUPPORTED_OTHER = {
    "llamacpp-hermes-function-eq",
    "llamacpp-hermes-function-name-attr",
    "llamacpp-hermes-two-function-eq",
    "cit-qwen3-xml-llamacpp-coder-unicode-cjk",
}
TEXT_FORMATS = ("hermes_tags", "raw_json", "other")
CASES = [c for c in ALL_CASES if c["format"] in TEXT_FORMATS]


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


@pytest.mark.parametrize("case", params(CORPUS, [c for c in CASES if c["id"] not in POLICY]))
def test_case_parses_as_its_source_expects(case: dict[str, Any]) -> None:
    if case["format"] == "other":
        assert case["id"] in SUPPORTED_OTHER, "unsupported 'other' case missing from the policy"
    assert conforms(case, parse_text(case["text"])) == []


@pytest.mark.parametrize("case", params(CORPUS, [c for c in CASES if c["id"] in POLICY]))
def test_policy_case_really_differs(case: dict[str, Any]) -> None:
    # A policy entry that we now conform to should be taken off the list.
    assert conforms(case, parse_text(case["text"])) != []


@pytest.mark.parametrize("case", params(CORPUS, CASES))
def test_case_streamed_per_character_equals_batch(case: dict[str, Any]) -> None:
    assert parse_chunks(list(case["text"])) == parse_text(case["text"])


@pytest.mark.parametrize("case", params(CORPUS, [c for c in CASES if "chunks" in c]))
def test_case_streamed_in_its_own_chunks_equals_batch(case: dict[str, Any]) -> None:
    assert "".join(case["chunks"]) == case["text"]
    assert parse_chunks(case["chunks"]) == parse_text(case["text"])


def test_every_policy_id_is_in_the_corpus() -> None:
    ids = {c["id"] for c in ALL_CASES}
    assert set(POLICY) - ids == set()
    assert all(reason.strip() for reason in POLICY.values())


def test_every_unsupported_other_case_is_in_the_policy() -> None:
    others = {c["id"] for c in CASES if c["format"] == "other"}
    assert others - SUPPORTED_OTHER - set(POLICY) == set()


def test_truncated_cases_report_a_truncated_error_and_leak_no_markup() -> None:
    truncated = [c for c in CASES if "expected_error" in c]
    assert truncated, "the corpus should hold cut-off replies"
    for case in truncated:
        parsed = parse_text(case["text"])
        assert [e.truncated for e in parsed.errors] == [True], case["id"]
        assert "<tool_call>" not in parsed.text, case["id"]
