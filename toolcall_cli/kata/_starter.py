"""A kata's starter file, made from its reference solution: the module docstring (the rules),
the imports, and each function or class the user writes, with its signature and docstring and
a body that raises NotImplementedError. One source for the interface, so the two never drift.
The first line records which kata it is and when it was started, for `kata check`."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from datetime import datetime
from importlib import resources

from toolcall_cli.kata._catalog import KATAS, Kata, find_kata

HEADER_RE = re.compile(r"^# toolcall kata (?P<name>\w+) · started (?P<when>\S+)", re.M)
STUB = 'raise NotImplementedError("write this")'


def solution_text(kata: Kata) -> str:
    package, _, module = kata.solution.rpartition(".")
    return resources.files(package).joinpath(f"{module}.py").read_text(encoding="utf-8")


def short_text(kata: Kata) -> str:
    """The whiteboard-sized reference's source."""
    package, _, module = kata.short.rpartition(".")
    return resources.files(package).joinpath(f"{module}.py").read_text(encoding="utf-8")


def starter_text(kata: Kata, started: datetime) -> str:
    source = solution_text(kata)
    lines = source.splitlines()
    tree = ast.parse(source)
    docstring = segment(lines, tree.body[0].lineno, tree.body[0].end_lineno)
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    future = [segment(lines, n.lineno, n.end_lineno) for n in imports if is_future(n)]
    others = [segment(lines, n.lineno, n.end_lineno) for n in imports if not is_future(n)]
    stubs = [
        stubbed(lines, node)
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in kata.required
    ]
    head = "\n\n".join([instructions(kata, started), docstring, *future, "\n".join(others)])
    return "\n\n\n".join([head, *stubs]) + "\n"


def is_future(node: ast.Import | ast.ImportFrom) -> bool:
    return isinstance(node, ast.ImportFrom) and node.module == "__future__"


def instructions(kata: Kata, started: datetime) -> str:
    name = kata.file_name
    return "\n".join(
        [
            f"# toolcall kata {kata.name} · started {started.isoformat(timespec='seconds')}",
            "#",
            f"# Write {' and '.join(kata.required)} below; the docstrings say what is graded.",
            f"# Check it, as often as you like:  toolcall kata check {name}",
            f"# Stuck? The reference solution:   toolcall kata solution {kata.name}",
        ]
    )


def segment(lines: list[str], first: int, last: int | None) -> str:
    return "\n".join(lines[first - 1 : last or first])


def stubbed(lines: list[str], node: ast.FunctionDef | ast.ClassDef) -> str:
    """The definition down to its docstring, then a stub body; a class keeps __init__ and its
    public methods, each stubbed the same way."""
    body = node.body
    has_doc = (
        bool(body)
        and isinstance(body[0], ast.Expr)
        and isinstance(getattr(body[0], "value", None), ast.Constant)
    )
    head_end = body[0].end_lineno if has_doc else body[0].lineno - 1
    text = segment(lines, node.lineno, head_end)
    indent = " " * (body[0].col_offset)
    if isinstance(node, ast.FunctionDef):
        stub = "pass  # keep the state your parser needs" if node.name == "__init__" else STUB
        return f"{text}\n{indent}{stub}"
    methods = [
        m
        for m in body
        if isinstance(m, ast.FunctionDef) and (m.name == "__init__" or not m.name.startswith("_"))
    ]
    return "\n\n".join([text, *(stubbed(lines, m) for m in methods)])


@dataclass(frozen=True)
class Header:
    kata: Kata
    started: datetime | None


def read_header(text: str) -> Header | None:
    """Which kata a file is, and when it was started: from the starter's first line, else from
    the names it defines (without running it)."""
    found = HEADER_RE.search(text)
    if found and found["name"] in {k.name for k in KATAS}:
        try:
            started: datetime | None = datetime.fromisoformat(found["when"])
        except ValueError:
            started = None
        return Header(find_kata(found["name"]), started)
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # the grader will say why
        return None
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    matching = [k for k in KATAS if set(k.required) <= defined]
    return Header(matching[0], None) if len(matching) == 1 else None
