"""`toolcall eval`'s own flags, one option group (with the session's groups beside it).

No `from __future__ import annotations` here: the command line reads each field's type."""

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from toolcall_cli.app.options import option
from toolcall_cli.evaluate.cases import CaseFormat


@dataclass(frozen=True)
class EvalFlags:
    """What to run every case under, and how to report it."""

    PANEL: ClassVar[str] = "Eval"
    models: tuple[str, ...] = option(
        (),
        "--model",
        "-m",
        metavar="NAME",
        help="A model to eval: offline (default) or a name at --base-url (repeatable, or a "
        "comma list).",
    )
    profiles: tuple[str, ...] = option(
        (), "--profile", "-p", metavar="NAME", help="A named endpoint (repeatable, or a list)."
    )
    base_urls: tuple[str, ...] = option(
        (),
        "--base-url",
        metavar="URL",
        help="An OpenAI-compatible endpoint (repeatable, or a list).",
    )
    strategies: str = option(
        "default",
        "--strategy",
        "-s",
        metavar="STRATEGY[,STRATEGY...]",
        help="default (what `run` picks), all, or a list: regex, schema, schema-json, "
        "schema-required, stream, stream-native.",
    )
    case_format: CaseFormat = option(
        "auto", "--format", help="auto (by the file's suffix), jsonl, toml, bfcl."
    )
    repeat: int = option(
        1, "--repeat", min=1, max=1000, metavar="N", help="Run each case N times, seeds S..S+N-1."
    )
    jobs: int = option(
        1, "--jobs", "-j", min=1, max=64, metavar="N", help="Runs at once against one server."
    )
    calls_only: bool = option(
        False, "--calls-only", help="Grade the first reply's calls, running no tool (BFCL's AST)."
    )
    resume: bool = option(
        False,
        "--resume",
        help="Go on with the eval in --out (default: the last of this case file), skipping "
        "every run its results hold.",
    )
    out: Path | None = option(
        None, "--out", metavar="DIR", help="The eval's folder: results.jsonl and a trace per run."
    )
    as_json: bool = option(False, "--json", help="The figures and every run, as JSON.")
    html: Path | None = option(
        None, "--html", metavar="FILE", help="Write the report as one HTML page to this file."
    )
    fail_under: float | None = option(
        None,
        "--fail-under",
        metavar="SHARE",
        min=0.0,
        max=2.0,
        help="Exit 1 when fewer than this share of the graded runs are right (0.8: 80%).",
    )
