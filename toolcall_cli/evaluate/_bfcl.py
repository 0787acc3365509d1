"""BFCL's format (the Berkeley Function-Calling Leaderboard's data files), read as cases: a
question file of JSON lines (`id`, `question` as turns of messages, `function` as the
descriptions the model is given), and the possible answers in `possible_answer/` beside it
under the same name (`ground_truth`: a call per entry, each argument's acceptable values).
Nothing is fetched: the user downloads the files. A file without possible answers is graded as
irrelevance (no call is right). The functions are described, not given as code, so their calls
are graded and never run."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolcall_cli.app.errors import AppError
from toolcall_cli.evaluate._matching import ExpectedCall, acceptable
from toolcall_cli.evaluate.cases import (
    CATEGORIES,
    Case,
    category_of,
    check_unique,
    conversation,
    json_lines,
    read_text,
)
from toolcall_cli.messages import ToolSpec

TYPES = {"dict": "object", "float": "number", "tuple": "array"}
"""BFCL's parameter types that JSON Schema calls otherwise (its "any" has no type at all)."""


def tool_name(name: str) -> str:
    """A BFCL function's name as a tool may be named on the wire (`math.factorial` is
    `math_factorial`, as BFCL itself sends it to OpenAI-compatible models)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64]


def schema(value: Any) -> Any:
    """BFCL's parameters as JSON Schema: its own type names changed, everywhere in the tree."""
    if isinstance(value, list):
        return [schema(item) for item in value]
    if not isinstance(value, dict):
        return value
    converted = {key: schema(item) for key, item in value.items()}
    kind = converted.get("type")
    if kind == "any":
        del converted["type"]
    elif isinstance(kind, str) and kind in TYPES:
        converted["type"] = TYPES[kind]
    return converted


def spec_of(function: Any, where: str) -> ToolSpec:
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise AppError(f"{where}: each function is an object with a name")
    parameters = schema(function.get("parameters") or {"type": "object", "properties": {}})
    if not isinstance(parameters, dict):
        raise AppError(f"{where}: {function['name']}'s parameters must be an object")
    return ToolSpec(tool_name(function["name"]), str(function.get("description") or ""), parameters)


def category_from(path: Path) -> str | None:
    """`BFCL_v3_parallel_multiple.json` -> parallel-multiple; live_ files as their kind."""
    stem = re.sub(r"^BFCL_v\d+_", "", path.stem)
    stem = stem.removeprefix("live_").replace("_", "-")
    return stem if stem in CATEGORIES else None


def answers_of(path: Path) -> dict[str, list[Any]] | None:
    """The possible answers by id, from `possible_answer/` beside the question file; None when
    there is no such file (irrelevance)."""
    beside = path.parent / "possible_answer" / path.name
    if not beside.exists():
        return None
    found: dict[str, list[Any]] = {}
    for where, record in json_lines(beside, read_text(beside)):
        truth = record.get("ground_truth") if isinstance(record, dict) else None
        if not isinstance(truth, list) or not isinstance(record.get("id"), str):
            raise AppError(f'{where}: expected {{"id": ..., "ground_truth": [...]}}')
        found[record["id"]] = truth
    return found


def expected_of(truth: list[Any], where: str) -> tuple[ExpectedCall, ...]:
    """BFCL's ground truth, `[{"name": {"arg": [values...]}}]`, as the calls expected."""
    calls = []
    for entry in truth:
        if not isinstance(entry, dict) or len(entry) != 1:
            raise AppError(f"{where}: each ground-truth entry is {{FUNCTION: {{ARG: [VALUES]}}}}")
        ((name, args),) = entry.items()
        if not isinstance(args, dict):
            raise AppError(f"{where}: {name}'s arguments must be an object")
        calls.append(ExpectedCall(tool_name(name), {k: acceptable(v) for k, v in args.items()}))
    return tuple(calls)


def question_of(record: Mapping[str, Any], where: str) -> tuple[str, tuple[Any, ...]]:
    turns = record.get("question")
    if isinstance(turns, list) and turns and all(isinstance(turn, list) for turn in turns):
        if len(turns) > 1:
            raise AppError(f"{where}: a multi-turn case (BFCL's multi_turn) is not supported")
        turns = turns[0]
    return conversation(turns, where)


def read_bfcl(path: Path) -> list[Case]:
    answers = answers_of(path)
    named = category_from(path)
    cases = []
    for where, record in json_lines(path, read_text(path)):
        if not isinstance(record, dict) or not isinstance(record.get("id"), str):
            raise AppError(f"{where}: a BFCL case is an object with an id")
        cases.append(case_of(record, answers, named, where))
    if not cases:
        raise AppError(f"{path}: no cases")
    check_unique([(case.id, f"{path}") for case in cases])
    return cases


def case_of(
    record: Mapping[str, Any], answers: dict[str, list[Any]] | None, named: str | None, where: str
) -> Case:
    question, history = question_of(record, where)
    functions = record.get("function")
    if not isinstance(functions, list):
        raise AppError(f"{where}: function must be a list of function descriptions")
    if answers is None:
        calls: tuple[ExpectedCall, ...] = ()
    elif record["id"] in answers:
        calls = expected_of(answers[record["id"]], where)
    else:
        raise AppError(f"{where}: no possible answer for {record['id']!r}")
    return Case(
        id=record["id"],
        question=question,
        history=history,
        category=category_of(named, calls, where),
        calls=calls,
        specs=tuple(spec_of(function, where) for function in functions),
    )
