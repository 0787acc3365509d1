"""Hot reload of tools.d in chat: which plugin files changed since they were loaded, their new
tools put in the registry (only the plugin files' tools: MCP tools and `search_tools` stay as they
are), and what that changed, one line each."""

from __future__ import annotations

import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from toolcall_cli.events import Notice
from toolcall_cli.tools._import_check import check_imports
from toolcall_cli.tools._plugin_guard import IMPORT_DEADLINE
from toolcall_cli.tools.loader import (
    LoadResult,
    PluginFile,
    clash_line,
    display_path,
    load_plugin,
    plugin_files,
)
from toolcall_cli.tools.registry import Tool, ToolRegistry

ChangeKind = Literal["added", "changed", "removed"]


@dataclass(frozen=True)
class ToolChange:
    """One tool that a reload added, changed or removed."""

    kind: ChangeKind
    name: str
    source: str
    """The plugin file, as messages show it."""
    what: tuple[str, ...] = ()
    """For a change: what differs (spec, code, policy, the file it comes from)."""

    def line(self) -> str:
        detail = f" ({', '.join(self.what)})" if self.what else ""
        return f"reload: {self.kind} {self.name}{detail} · {self.source}"


@dataclass
class ReloadReport:
    """What a reload did: the tools it changed, the files it loaded anew without a change to
    any tool, and one line per problem."""

    changes: list[ToolChange] = field(default_factory=list)
    unchanged_files: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def nothing_changed(self) -> bool:
        return not (self.changes or self.unchanged_files or self.problems)

    def notices(self) -> list[Notice]:
        """The report as the view and the trace take it: the problems are warnings."""
        lines = [Notice(message=change.line()) for change in self.changes]
        lines += [
            Notice(message=f"reload: {file} loaded anew; no tool's spec or code changed")
            for file in self.unchanged_files
        ]
        lines += [Notice(level="warning", message=f"reload: {line}") for line in self.problems]
        return lines


class ToolReloader:
    """Remembers each plugin file as last loaded, and reloads the ones that changed."""

    def __init__(self, loaded: LoadResult, *, deadline: float = IMPORT_DEADLINE) -> None:
        self.dirs = list(loaded.dirs)
        self.deadline = deadline
        """Seconds a changed file's import may take (see plugin_guard)."""
        self._files: dict[Path, PluginFile] = {plugin.path: plugin for plugin in loaded.plugins}
        sources = {str(path) for path in self._files}
        self._owned: dict[str, Tool] = {
            item.name: item for item in loaded.registry if item.source in sources
        }
        """The plugin tools in the registry, by name: the only tools a reload touches."""

    def watched_dirs(self) -> list[Path]:
        """The tools.d directories that exist now (a missing one cannot be watched)."""
        return [directory for directory in self.dirs if directory.is_dir()]

    def reload(self, registry: ToolRegistry) -> ReloadReport:
        """Load every plugin file that is new or changed, and bring `registry` up to date.
        Nothing changes until all files are loaded: Ctrl-C while a plugin imports leaves the
        registry as it was."""
        report = ReloadReport()
        files: dict[Path, PluginFile] = {}
        fresh: set[Path] = set()
        current = self._current_files()
        changed = [path for path, identity in current if not self._same(path, identity)]
        # Each changed file is tried in a child first: only those that load there load here.
        tried = check_imports(changed, deadline=self.deadline) if changed else {}
        for path, identity in current:
            old = self._files.get(path)
            if old is not None and path not in tried:
                files[path] = old
                continue
            problem = tried.get(path)
            files[path], loaded = load_anew(path, identity, old, report, problem, self.deadline)
            if loaded:
                fresh.add(path)
        owned = self._claim(files, fresh, registry, report)
        report.changes = tool_changes(self._owned, owned)
        changed_sources = {change.source for change in report.changes}
        report.unchanged_files = [
            display_path(path) for path in fresh if display_path(path) not in changed_sources
        ]
        self._apply(owned, registry)
        self._files = files
        return report

    def _same(self, path: Path, identity: str | None) -> bool:
        old = self._files.get(path)
        return old is not None and old.identity == identity

    def _current_files(self) -> list[tuple[Path, str | None]]:
        """The plugin files now, in load order, as load_tools takes them: a file
        byte-identical to an earlier one is that plugin again, and is passed over."""
        seen: set[str] = set()
        dirs = self.watched_dirs()
        return [found for directory in dirs for found in plugin_files(directory, seen)]

    def _claim(
        self,
        files: Mapping[Path, PluginFile],
        fresh: set[Path],
        registry: ToolRegistry,
        report: ReloadReport,
    ) -> dict[str, Tool]:
        """Which file's tool holds each name. A name stays with the file that held it, so an
        edit elsewhere never takes a working tool away; the rest go first come, first served,
        in load order, and a tool left out is told as the loader tells it (only for a file
        loaded anew: an unchanged file's clash was told before)."""
        others = {item.name: item for item in registry if item.name not in self._owned}
        wanted = [(path, item) for path, plugin in files.items() for item in plugin.tools]
        owned: dict[str, Tool] = {}
        for path, item in wanted:
            holder = self._owned.get(item.name)
            if holder is not None and holder.source == str(path):
                owned[item.name] = item
        for path, item in wanted:
            if owned.get(item.name) is item:
                continue
            existing = owned.get(item.name) or others.get(item.name)
            if existing is None:
                owned[item.name] = item
            elif path in fresh:
                report.problems.append(clash_line(item, existing))
        return owned

    def _apply(self, owned: dict[str, Tool], registry: ToolRegistry) -> None:
        for name, item in self._owned.items():
            if name not in owned and registry.get(name) is item:
                registry.remove(name)
        for item in owned.values():
            registry.replace(item)
        self._owned = owned


def load_anew(
    path: Path,
    identity: str | None,
    old: PluginFile | None,
    report: ReloadReport,
    tried: str | None = None,
    deadline: float = IMPORT_DEADLINE,
) -> tuple[PluginFile, bool]:
    """The file's new version, or its last good one when the new one is broken (it does not
    import, or a tool in it cannot be defined), with one line saying so. `tried`: the problem
    its trial in a child process found (then it is not imported here at all). The flag: whether
    the new version is the one in use."""
    shown = display_path(path)
    last_good = old.tools if old is not None else []
    keeping = "; its last good version stays in use" if last_good else ""
    found = tried if tried is not None else load_plugin(path, fresh=True, deadline=deadline)
    if isinstance(found, str):
        report.problems.append(f"{shown}: could not load: {found}{keeping}")
        return PluginFile(path=path, identity=identity, tools=last_good), False
    if found.definition_errors and last_good:
        first, more = found.definition_errors[0], len(found.definition_errors) - 1
        also = f" (and {more} more)" if more else ""
        report.problems.append(f"{shown}: {first}{also}{keeping}")
        return PluginFile(path=path, identity=identity, tools=last_good), False
    report.problems += [f"{shown}: {problem}" for problem in found.problems]
    return PluginFile(path=path, identity=identity, tools=list(found.tools)), True


def tool_changes(before: Mapping[str, Tool], after: Mapping[str, Tool]) -> list[ToolChange]:
    """Added, changed and removed tools, by name: after's order, then the removed ones."""
    changes: list[ToolChange] = []
    for name, item in after.items():
        old = before.get(name)
        shown = display_path(Path(item.source))
        if old is None:
            changes.append(ToolChange("added", name, shown))
        elif old is not item and (what := differences(old, item)):
            changes.append(ToolChange("changed", name, shown, what))
    changes += [
        ToolChange("removed", name, display_path(Path(item.source)))
        for name, item in before.items()
        if name not in after
    ]
    return changes


def differences(old: Tool, new: Tool) -> tuple[str, ...]:
    """What differs between two versions of a tool: the spec the model sees, the function's
    own code (not its line numbers: a line added above it changes nothing), its policy, and
    the file it comes from."""
    what: list[str] = []
    if old.spec != new.spec:
        what.append("spec")
    if code_fingerprint(old.func) != code_fingerprint(new.func):
        what.append("code")
    if old.policy() != new.policy():
        what.append("policy")
    if old.source != new.source:
        what.append(f"was in {display_path(Path(old.source))}")
    return tuple(what)


def code_fingerprint(func: Callable[..., Any]) -> tuple[object, ...]:
    """The function's bytecode, constants and names, its nested functions' too, and its
    defaults: equal for the same code wherever in the file it sits. Its docstring is left out:
    that is the spec's description, told as a spec change."""
    code = getattr(func, "__code__", None)
    if not isinstance(code, types.CodeType):
        return (repr(func),)
    defaults = getattr(func, "__defaults__", None), getattr(func, "__kwdefaults__", None)
    return (_code_shape(code, getattr(func, "__doc__", None)), repr(defaults))


def _code_shape(code: types.CodeType, doc: object = None) -> tuple[object, ...]:
    consts = tuple(
        _code_shape(const) if isinstance(const, types.CodeType) else repr(const)
        for const in code.co_consts
        if doc is None or const != doc
    )
    return (code.co_code, consts, code.co_names, code.co_varnames, code.co_freevars)
