"""The docs site builds, with no broken link or anchor, and nothing a public reader is shown
points outside the repository.

`mkdocs build --strict` (mkdocs.yml: a link to a missing page or heading is an error there) runs
on the repository's docs/, and on a copy given a broken anchor, which must fail. The citation
check reads README.md, docs/, the package and the files a clone ships, for the private notes the
project was planned in: none of them is in the repository. Every flag the pages' inline code
names is a flag of its command (the commands of their code blocks run in tests/test_readme.py).
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# The slugs of the site's table of contents (Python-Markdown ships no type information).
from markdown.extensions.toc import slugify  # type: ignore[import-untyped]

REPOSITORY = Path(__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parent
CITATION = re.compile(r"seed 00|DESIGN\.md|\.\./shared", re.IGNORECASE)
"""What a public reader cannot follow: the planning notes, and a folder beside the repository."""
READ_BY_THE_PUBLIC = (
    "README.md",
    "ARCHITECTURE.md",
    "docs",
    "toolcall_cli",
    "mkdocs.yml",
    "pyproject.toml",
    "examples",
)
TEXT = {".md", ".py", ".toml", ".yml", ".json", ".jsonl", ".txt", ".sse"}


def built(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """`mkdocs build --strict` of `config` into `site`."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", *("-f", config, "-d", site)],
        capture_output=True,
        text=True,
        timeout=300,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": str(Path(sys.executable).parent)},
    )


def test_the_docs_site_builds_strictly(tmp_path: Path) -> None:
    done = built(REPOSITORY / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "getting-started" / "index.html").is_file()


def test_a_broken_anchor_fails_the_build(tmp_path: Path) -> None:
    """The strictness is real: a link to a heading that is not there breaks the build."""
    copy = tmp_path / "repo"
    copy.mkdir()
    shutil.copy(REPOSITORY / "mkdocs.yml", copy / "mkdocs.yml")
    shutil.copy(REPOSITORY / "ARCHITECTURE.md", copy / "ARCHITECTURE.md")
    shutil.copytree(REPOSITORY / "docs", copy / "docs")
    page = copy / "docs" / "exit-codes.md"
    page.write_text(
        page.read_text(encoding="utf-8") + "\nSee [nowhere](traces.md#no-such-heading).\n",
        encoding="utf-8",
    )
    done = built(copy / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0
    assert "no-such-heading" in done.stdout + done.stderr


def test_every_page_is_in_the_nav() -> None:
    """A page left out of mkdocs.yml's nav cannot be found from the site."""
    nav = (REPOSITORY / "mkdocs.yml").read_text(encoding="utf-8")
    pages = {page.name for page in (REPOSITORY / "docs").glob("*.md")}
    assert {page for page in pages if f": {page}" not in nav} == set()


README_LINK = re.compile(r"\]\((?P<target>[^)\s#]*)(?:#(?P<anchor>[^)\s]*))?\)")


def broken_readme_links(readme: str) -> list[str]:
    """README.md's links into the repository that lead nowhere: it is read on the forge and in
    the package's metadata, outside the site, so the strict build does not check it."""
    broken = []
    for link in README_LINK.finditer(readme):
        target, anchor = link["target"], link["anchor"]
        if "://" in target or not target:
            continue
        path = REPOSITORY / target
        if not path.exists():
            broken.append(target)
        elif anchor and anchor not in headings(path):
            broken.append(f"{target}#{anchor}")
    return broken


def headings(page: Path) -> set[str]:
    """The anchors of a page's headings, as the site's table of contents makes them."""
    text = page.read_text(encoding="utf-8")
    found = re.findall(r"^#{1,6} (.+)$", re.sub(r"```.*?```", "", text, flags=re.S), re.M)
    return {slugify(title.replace("`", ""), "-") for title in found}


def test_the_readme_is_short_and_names_its_python() -> None:
    """A newcomer reads it top to bottom (the rest is on the site), and learns which Python the
    package installs on."""
    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    pyproject = (REPOSITORY / "pyproject.toml").read_text(encoding="utf-8")
    oldest = re.search(r'^requires-python = ">=([0-9.]+)"$', pyproject, re.M)
    assert oldest is not None
    assert f"Python {oldest[1]} or newer" in readme


def test_every_link_of_the_readme_leads_somewhere() -> None:
    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    assert len(README_LINK.findall(readme)) > 10
    assert broken_readme_links(readme) == []


def test_a_broken_readme_link_is_found() -> None:
    links = (
        "[a](docs/nowhere.md) [b](docs/traces.md#no-such-heading) "
        "[c](docs/traces.md#traces-as-scripts) [d](https://example.org/nowhere.md)"
    )
    assert broken_readme_links(links) == ["docs/nowhere.md", "docs/traces.md#no-such-heading"]


def test_the_real_model_figures_are_the_recorded_ones() -> None:
    """The models page's real-model figures cannot be measured here (they need a model server):
    its table is the bench's recorded table, row for row, and every `N/60` or `N/44` it quotes
    is in a results file it names."""
    page = (REPOSITORY / "docs" / "models.md").read_text(encoding="utf-8")
    named = sorted(set(re.findall(r"bench/results/[\w./]+\.md", page)))
    recorded = "\n".join((REPOSITORY / name).read_text(encoding="utf-8") for name in named)
    section = page.split("\n## Real-model results\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    assert len(rows) >= 7
    assert [row for row in rows if row not in recorded.splitlines()] == []
    quoted = set(re.findall(r"\b\d+/(?:60|44)\b", page))
    assert quoted and {figure for figure in quoted if figure not in recorded} == set()


def test_every_event_a_trace_records_is_in_the_trace_format() -> None:
    """The trace writer records every event a run yields; the format page names each kind."""
    events = (REPOSITORY / "toolcall_cli" / "events.py").read_text(encoding="utf-8")
    kinds = re.findall(r'kind: Literal\["([a-z_]+)"\]', events)
    page = (REPOSITORY / "docs" / "trace-format.md").read_text(encoding="utf-8")
    assert len(kinds) > 20
    assert [kind for kind in kinds if f"`{kind}`" not in page] == []


def test_every_exit_code_has_its_row() -> None:
    entry = (REPOSITORY / "toolcall_cli" / "cli" / "entry.py").read_text(encoding="utf-8")
    codes = re.findall(r"^EXIT_[A-Z_]+ = (\d+)$", entry, re.M)
    page = (REPOSITORY / "docs" / "exit-codes.md").read_text(encoding="utf-8")
    assert len(codes) >= 9
    assert [code for code in codes if f"\n| {code} | " not in page] == []


def public_files() -> list[Path]:
    found: list[Path] = []
    for name in READ_BY_THE_PUBLIC:
        path = REPOSITORY / name
        paths = [path] if path.is_file() else sorted(path.rglob("*"))
        found += [p for p in paths if p.is_file() and p.suffix in TEXT]
    return found


def cited(text: str) -> list[int]:
    """The numbers of the lines of `text` that cite what the repository lacks."""
    return [number for number, line in enumerate(text.splitlines(), 1) if CITATION.search(line)]


def citations(paths: list[Path]) -> list[str]:
    return [
        f"{path.relative_to(REPOSITORY)}:{number}"
        for path in paths
        for number in cited(path.read_text(encoding="utf-8"))
    ]


def test_nothing_a_reader_is_shown_cites_what_the_repository_lacks() -> None:
    paths = public_files()
    assert len(paths) > 100
    assert citations(paths) == []


def test_no_test_cites_the_planning_notes() -> None:
    """Test names and comments are read by contributors, who have no planning notes either."""
    notes = re.compile(r"seed 00|DESIGN\.md", re.IGNORECASE)
    found = [
        f"{path.name}:{number}"
        for path in sorted(TESTS.glob("*.py"))
        if path.name != Path(__file__).name
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if notes.search(line)
    ]
    assert found == []


NUMBERED_SCHEME = re.compile(
    r"\bscheme (one|two|three)\b|\bthe (three|two) schemes\b|方案[一二三]|三种方案", re.IGNORECASE
)
"""The strategies called by another name: "scheme one", "the three schemes", 方案二."""


def test_the_strategies_have_one_set_of_names() -> None:
    """regex, schema and stream, as `--strategy` names them, in the CLI, katas, drill and docs."""
    found = [
        f"{path.relative_to(REPOSITORY)}:{number}"
        for path in public_files()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if NUMBERED_SCHEME.search(line)
    ]
    assert found == []
    assert NUMBERED_SCHEME.search("scheme three: the streaming state machine")
    assert NUMBERED_SCHEME.search("三种方案怎么选")
    assert not NUMBERED_SCHEME.search("hosts compared by (scheme, host, port)")


@pytest.mark.parametrize(
    "line",
    ["How the three compare (Seed 000 §4.4)", "see design.md", "in ../shared/conformance"],
)
def test_the_citation_check_finds_a_citation(line: str) -> None:
    assert cited(f"# A page\n\n{line}\n") == [3]


INLINE_CODE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
FLAG = re.compile(r"--[a-z][a-z0-9-]*|-[a-z]")
"""A flag as the pages write one (`-N`, `-2`: a trace counted back, not a flag)."""


def command_flags() -> tuple[dict[tuple[str, ...], set[str]], set[str]]:
    """Each command's flags by its words (`("trace", "list")`), and every flag of any."""
    import typer.main

    from toolcall_cli.cli.entry import app

    flags: dict[tuple[str, ...], set[str]] = {}

    def walk(command: Any, words: tuple[str, ...]) -> None:
        flags[words] = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, (*words, name))

    walk(typer.main.get_command(app), ())
    return flags, set().union(*flags.values())


def unknown_flags(page: str) -> list[str]:
    """The flags the page's inline code names that toolcall lacks: in `toolcall CMD ...`, a
    flag CMD lacks; alone (`--trace-dir DIR`), one no command has. Code blocks' commands are
    run by tests/test_readme.py; another program's flags (`pipx install --force`) are its own."""
    flags, every = command_flags()
    unknown = []
    for span in INLINE_CODE.findall(page):
        text = span.strip()
        if text.startswith("-"):
            found = FLAG.match(text)
            if found and found[0] not in every:
                unknown.append(text)
            continue
        if not text.startswith("toolcall "):
            continue
        try:
            words = shlex.split(text)
        except ValueError:  # an unclosed quote: `toolcall run "…`
            words = text.split()
        known: tuple[str, ...] = ()
        for word in words[1:]:
            if (*known, word) not in flags:
                break
            known = (*known, word)
        for word in words[1 + len(known) :]:
            if word in ("|", "&&", ";", "#"):
                break
            flag = word.split("=", 1)[0]
            if FLAG.fullmatch(flag) and flag not in flags[known]:
                unknown.append(f"{text} ({flag})")
    return unknown


def test_every_flag_the_pages_name_is_a_flag_of_its_command() -> None:
    pages = [REPOSITORY / "README.md", REPOSITORY / "ARCHITECTURE.md"]
    pages += sorted((REPOSITORY / "docs").glob("*.md"))
    named = {
        f"{page.name}: {flag}"
        for page in pages
        for flag in unknown_flags(page.read_text(encoding="utf-8"))
    }
    assert named == set()


def test_a_flag_no_command_has_is_found() -> None:
    page = (
        "`toolcall trace list --all -n 3`, `toolcall trace list --svg x`, `--trace-dir DIR`, "
        '`--no-such-flag`, `-N`, `toolcall run --quiet "…`, `toolcall eval --fail-under 0.8`, '
        '`toolcall compare --step "q"`, `pipx install --force .`'
    )
    assert unknown_flags(page) == [
        "toolcall trace list --svg x (--svg)",
        "--no-such-flag",
        'toolcall compare --step "q" (--step)',
    ]
