"""Case files: each case a question (or a short conversation), the tools it may use, and what
counts as right (the calls expected, the answer expected, or no call at all). JSONL or TOML
(`[[case]]` tables); BFCL's format is read by `_bfcl`. docs/eval.md describes the keys."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from toolcall_cli.app.errors import AppError
from toolcall_cli.evaluate._grading import ExpectedAnswer, clock
from toolcall_cli.evaluate._matching import ExpectedCall, Tolerance, acceptable
from toolcall_cli.messages import Message, ToolSpec
from toolcall_cli.private_files import read_bounded

Category = Literal["simple", "multiple", "parallel", "parallel-multiple", "irrelevance", "answer"]
CATEGORIES: tuple[Category, ...] = get_args(Category)
CaseFormat = Literal["auto", "jsonl", "toml", "bfcl"]

MAX_CASE_FILE_BYTES = 64 * 1024 * 1024
"""A case file larger than this is refused before it is read."""

KNOWN_KEYS = frozenset(
    {"id", "question", "category", "tools", "only", "calls", "answer", "no_call", "now", "lang"}
)
ANSWER_KEYS = frozenset({"numbers", "any", "times", "regex", "tolerance", "compute"})


@dataclass(frozen=True)
class ComputeStep:
    """One tool call whose result a computed answer uses: `$name.field` in later values."""

    name: str
    tool: str
    args: Mapping[str, Any]


@dataclass(frozen=True)
class AnswerSpec:
    """The answer as a case writes it, `$name.field` not yet computed."""

    numbers: tuple[Any, ...] = ()
    texts: tuple[Any, ...] = ()
    times: tuple[Any, ...] = ()
    pattern: str | None = None
    tolerance: Tolerance | None = None
    compute: tuple[ComputeStep, ...] = ()

    @property
    def computed(self) -> bool:
        return bool(self.compute)


@dataclass(frozen=True)
class Case:
    id: str
    question: str
    history: tuple[Message, ...] = ()
    """The conversation before the question, for a case that is a short conversation."""
    category: Category = "answer"
    tools: Path | None = None
    """Another tools.d directory for this case, beside the eval's tools."""
    only: tuple[str, ...] = ()
    """The tools the model is offered (none: all the eval's tools)."""
    calls: tuple[ExpectedCall, ...] | None = None
    """None: the calls are not graded."""
    answer: AnswerSpec | None = None
    now: str | None = None
    """The instant get_time reads (TOOLCALL_NOW) while the case runs and its answer is computed."""
    specs: tuple[ToolSpec, ...] = ()
    """Tools described but not given as code (BFCL's functions): their calls are graded only."""
    lang: str = ""

    @property
    def no_call(self) -> bool:
        return self.calls == ()


# --- reading ------------------------------------------------------------------------------------


def read_text(path: Path) -> str:
    """A case file's text; one line (AppError) when it cannot be read."""
    try:
        if path.stat().st_size > MAX_CASE_FILE_BYTES:
            raise AppError(f"{path}: larger than {MAX_CASE_FILE_BYTES // 2**20} MiB")
        # Bounded as it is read too: a pipe or a device has no size to look at first.
        return read_bounded(path, MAX_CASE_FILE_BYTES).decode("utf-8")
    except FileNotFoundError:
        raise AppError(f"no such case file: {path}") from None
    except IsADirectoryError:
        raise AppError(f"{path} is a directory, not a case file") from None
    except UnicodeDecodeError as error:
        raise AppError(f"{path} is not UTF-8 text (a bad byte at offset {error.start})") from None
    except OSError as error:
        raise AppError(f"cannot read {path}: {error.strerror or error}") from None


def read_cases(path: Path, format: CaseFormat = "auto") -> list[Case]:
    """The cases of a file; AppError naming the file and line of the first bad one."""
    if format == "auto":
        format = "toml" if path.suffix == ".toml" else "jsonl"
    if format == "bfcl":
        from toolcall_cli.evaluate._bfcl import read_bfcl

        return read_bfcl(path)
    text = read_text(path)
    records = toml_records(path, text) if format == "toml" else jsonl_records(path, text)
    cases = [case_from(record, path.parent, where) for where, record in records]
    if not cases:
        raise AppError(f"{path}: no cases")
    check_unique([(case.id, where) for case, (where, _) in zip(cases, records, strict=True)])
    return cases


def json_lines(path: Path, text: str) -> Iterator[tuple[str, Any]]:
    """Each line's value, with `path:line` for messages; blank lines and `//` comments skipped."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        where = f"{path}:{number}"
        try:
            yield where, json.loads(line)
        except ValueError as error:
            raise AppError(f"{where}: not JSON ({error})") from None
        except RecursionError:
            raise AppError(f"{where}: nested too deep") from None


def jsonl_records(path: Path, text: str) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for where, record in json_lines(path, text):
        if not isinstance(record, dict):
            raise AppError(f"{where}: a case is a JSON object")
        found.append((where, record))
    return found


def toml_records(path: Path, text: str) -> list[tuple[str, dict[str, Any]]]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]
    try:
        document = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as error:
        raise AppError(f"{path}: not TOML ({error})") from None
    cases = document.get("case")
    if not isinstance(cases, list) or not all(isinstance(c, dict) for c in cases):
        raise AppError(f"{path}: the cases are [[case]] tables")
    shared = {key: document[key] for key in ("now", "tools", "only") if key in document}
    return [(f"{path}: case {n}", {**shared, **case}) for n, case in enumerate(cases, start=1)]


def check_unique(ids: Sequence[tuple[str, str]]) -> None:
    seen: dict[str, str] = {}
    for case_id, where in ids:
        if case_id in seen:
            raise AppError(f"{where}: the id {case_id!r} is also the id of {seen[case_id]}")
        seen[case_id] = where


# --- one case -----------------------------------------------------------------------------------


def case_from(record: Mapping[str, Any], base: Path, where: str) -> Case:
    """A case from its record; `base`: the directory its tools path is relative to."""
    unknown = sorted(set(record) - KNOWN_KEYS)
    if unknown:
        raise AppError(
            f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(KNOWN_KEYS))})"
        )
    question, history = conversation(record.get("question"), where)
    calls = expected_calls(record, where)
    answer = answer_spec(record["answer"], where) if "answer" in record else None
    if calls is None and answer is None:
        raise AppError(f"{where}: say what is right: calls, answer or no_call")
    tools = record.get("tools")
    case_id = record.get("id", where.rsplit(":", 1)[-1].strip())
    return Case(
        id=text_of(case_id, "id", where),
        question=question,
        history=history,
        category=category_of(record.get("category"), calls, where),
        tools=(base / text_of(tools, "tools", where)) if tools is not None else None,
        only=tuple(text_of(name, "only", where) for name in list_of(record.get("only"), where)),
        calls=calls,
        answer=answer,
        now=text_of(record["now"], "now", where) if record.get("now") is not None else None,
        lang=str(record.get("lang") or ""),
    )


def text_of(value: Any, key: str, where: str) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and key == "id":
        return str(value)
    if not isinstance(value, str) or not value.strip():
        raise AppError(f"{where}: {key} must be a non-empty string")
    return value


def list_of(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise AppError(f"{where}: expected a list, got {type(value).__name__}")
    return value


ROLES = ("user", "assistant", "system")


def conversation(value: Any, where: str) -> tuple[str, tuple[Message, ...]]:
    """The question, and the conversation before it: a string, or a list of messages
    ({"role", "content"}) whose last is the user's question."""
    if isinstance(value, str):
        if not value.strip():
            raise AppError(f"{where}: the question is empty")
        return value, ()
    if not isinstance(value, list) or not value:
        raise AppError(f"{where}: question must be a string or a list of messages")
    messages = []
    for item in value:
        role = item.get("role") if isinstance(item, dict) else None
        content = item.get("content") if isinstance(item, dict) else None
        if role not in ROLES or not isinstance(content, str):
            raise AppError(
                f'{where}: each message is {{"role": user|assistant|system, "content": text}}'
            )
        messages.append(Message(role=role, content=content))
    last = messages.pop()
    if last.role != "user" or not (last.content or "").strip():
        raise AppError(f"{where}: the conversation must end with the user's question")
    return last.content or "", tuple(messages)


def expected_calls(record: Mapping[str, Any], where: str) -> tuple[ExpectedCall, ...] | None:
    """The calls expected: () for no_call, None when calls are not graded."""
    if record.get("no_call") is True:
        if record.get("calls"):
            raise AppError(f"{where}: no_call and calls cannot both be given")
        return ()
    if "calls" not in record:
        return None
    calls = []
    for item in list_of(record["calls"], where):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise AppError(f'{where}: each call is {{"name": TOOL, "args": {{...}}}}')
        if "args" not in item:  # {"name": "calculate"}: the tool is graded, its arguments not
            calls.append(ExpectedCall(item["name"], None))
            continue
        args = item["args"]
        if not isinstance(args, dict):
            raise AppError(f"{where}: {item['name']}'s args must be an object")
        calls.append(ExpectedCall(item["name"], {k: acceptable(v) for k, v in args.items()}))
    return tuple(calls)


def category_of(value: Any, calls: tuple[ExpectedCall, ...] | None, where: str) -> Category:
    """The case's category as given (BFCL's `parallel_multiple` is `parallel-multiple`), else
    read from its calls."""
    if value is not None:
        named = str(value).replace("_", "-")
        if named not in CATEGORIES:
            raise AppError(f"{where}: category must be one of {', '.join(CATEGORIES)}")
        return named
    if calls is None:
        return "answer"
    if not calls:
        return "irrelevance"
    if len(calls) == 1:
        return "simple"
    return "parallel" if len({call.name for call in calls}) == 1 else "parallel-multiple"


def tolerance_of(value: Any, where: str) -> Tolerance | None:
    if value is None:
        return None
    if _amount(value):
        return Tolerance(abs=float(value), rel=0.0)
    shaped = isinstance(value, dict) and set(value) <= {"abs", "rel"}
    if shaped and all(_amount(v) for v in value.values()):
        return Tolerance(abs=float(value.get("abs", 0.0)), rel=float(value.get("rel", 0.0)))
    raise AppError(f'{where}: tolerance is a number, or {{"abs": N, "rel": N}}')


def _amount(value: Any) -> bool:
    """A number that is not negative (true and false are no numbers)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0


def answer_spec(value: Any, where: str) -> AnswerSpec:
    if not isinstance(value, dict):
        raise AppError(f"{where}: answer must be an object (numbers, any, times, regex, compute)")
    unknown = sorted(set(value) - ANSWER_KEYS)
    if unknown:
        raise AppError(f"{where}: unknown key {unknown[0]!r} in answer")
    pattern = value.get("regex")
    if pattern is not None:
        try:
            re.compile(text_of(pattern, "regex", where))
        except re.error as error:
            raise AppError(f"{where}: regex: {error}") from None
    spec = AnswerSpec(
        numbers=tuple(list_of(value.get("numbers"), where)),
        texts=tuple(list_of(value.get("any"), where)),
        times=tuple(list_of(value.get("times"), where)),
        pattern=pattern,
        tolerance=tolerance_of(value.get("tolerance"), where),
        compute=tuple(compute_step(step, where) for step in list_of(value.get("compute"), where)),
    )
    if not (spec.numbers or spec.texts or spec.times or spec.pattern):
        raise AppError(f"{where}: answer needs numbers, any, times or regex")
    if not spec.compute:
        expected_answer(spec, {}, where)  # a bad figure is told before anything runs
    return spec


def compute_step(value: Any, where: str) -> ComputeStep:
    if not (
        isinstance(value, dict)
        and isinstance(value.get("as"), str)
        and isinstance(value.get("tool"), str)
        and isinstance(value.get("args", {}), dict)
    ):
        raise AppError(f'{where}: each compute step is {{"as": NAME, "tool": TOOL, "args": {{}}}}')
    return ComputeStep(value["as"], value["tool"], value.get("args", {}))


# --- computing the answer -----------------------------------------------------------------------

ToolFunctions = Mapping[str, Callable[..., Any]]


def _lookup(path: str, bound: Mapping[str, Any], where: str) -> Any:
    """`w.high_c` -> bound["w"]["high_c"]; `x` -> bound["x"]."""
    name, *fields = path.split(".")
    if name not in bound:
        raise AppError(f"{where}: ${name} is computed by no step before it")
    value = bound[name]
    for part in fields:
        if not isinstance(value, dict) or part not in value:
            raise AppError(f"{where}: ${path}: the result has no field {part!r}")
        value = value[part]
    return value


_REFERENCE = re.compile(r"\$([A-Za-z_]\w*(?:\.\w+)*)")


def resolved(value: Any, bound: Mapping[str, Any], where: str) -> Any:
    """`$w.high_c` -> that value; `($w.high_c+$w.low_c)/2` -> the text with each value in it
    (for a calculator's expression); anything else as it is."""
    if not isinstance(value, str) or "$" not in value:
        return value
    whole = _REFERENCE.fullmatch(value)
    if whole:
        return _lookup(whole.group(1), bound, where)
    return _REFERENCE.sub(lambda m: repr(_lookup(m.group(1), bound, where)), value)


def computed(steps: Sequence[ComputeStep], tools: ToolFunctions, where: str) -> dict[str, Any]:
    """Each step's result by its name, the tools called as the model's calls run them."""
    bound: dict[str, Any] = {}
    for step in steps:
        function = tools.get(step.tool)
        if function is None:
            raise AppError(f"{where}: compute: no tool named {step.tool!r}")
        args = {key: resolved(value, bound, where) for key, value in step.args.items()}
        try:
            bound[step.name] = function(**args)
        except Exception as error:  # a tool's own error, named: the case is what is wrong
            raise AppError(f"{where}: compute: {step.tool} failed: {error}") from None
    return bound


def expected_answer(spec: AnswerSpec, tools: ToolFunctions, where: str) -> ExpectedAnswer:
    """The answer a case expects, its `compute` steps run with `tools`."""
    bound = computed(spec.compute, tools, where)
    try:
        return ExpectedAnswer(
            numbers=tuple(float(resolved(n, bound, where)) for n in spec.numbers),
            texts=tuple(str(resolved(t, bound, where)) for t in spec.texts),
            times=tuple(clock(str(resolved(t, bound, where))) for t in spec.times),
            pattern=spec.pattern,
            tolerance=spec.tolerance,
        )
    except (TypeError, ValueError) as error:
        raise AppError(f"{where}: answer: {error}") from None


def needed_tools(case: Case) -> set[str]:
    """The tools a right answer needs: those its computed answer or its calls name."""
    names = {call.name for call in case.calls or ()}
    if case.answer is not None:
        names |= {step.tool for step in case.answer.compute}
    return names
