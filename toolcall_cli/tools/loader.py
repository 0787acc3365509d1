"""Find tools.d directories and load the `@tool` functions their plugin files define.

A broken plugin never stops the others: every problem becomes one line naming the file.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.machinery
import importlib.util
import inspect
import re
import sys
import traceback
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolcall_cli.tools._plugin_guard import IMPORT_DEADLINE, ImportGuard, ImportStopped
from toolcall_cli.tools.registry import MARKED, Tool, ToolRegistry, tool_options
from toolcall_cli.tools.schema import ToolDefinitionError

_MODULE_PREFIX = "toolcall_plugin"
MAX_MESSAGE_CHARS = 200
"""A plugin's error message is cut to this many characters in its warning line."""


@dataclass
class PluginFile:
    """One plugin file as it was last loaded: what chat's hot reload compares a change with."""

    path: Path
    identity: str | None
    """The digest of the bytes that were loaded (see plugin_identity)."""
    tools: list[Tool] = field(default_factory=list)
    """Every tool it defined, registered or not (a name another file had is not)."""


@dataclass
class LoadResult:
    """The tools that loaded and one line per thing that went wrong."""

    registry: ToolRegistry = field(default_factory=ToolRegistry)
    problems: list[str] = field(default_factory=list)
    dirs: list[Path] = field(default_factory=list)
    """The directories the tools were looked for in, in load order."""
    plugins: list[PluginFile] = field(default_factory=list)
    """Each plugin file loaded, in load order (a file that failed to load has no tools)."""


BUNDLED_IN_PACKAGE = "_bundled_tools"
"""Where the wheel puts the repository's top-level tools.d (pyproject.toml maps it there)."""


def bundled_tools_dir() -> Path:
    """The bundled example tools: the wheel's copy inside the package, or else, in a source
    checkout (an editable install, or running from the repo), the repository's own tools.d.

    Found by path, not imported: setuptools' editable finder does not serve a sub-package
    mapped onto another directory (`import toolcall_cli._bundled_tools` fails in an editable
    install), and the loader runs each plugin file as its own module anyway. A checkout is
    known by its pyproject.toml, so a stray tools.d in site-packages is never taken for ours."""
    package = Path(__file__).resolve().parent.parent
    installed = package / BUNDLED_IN_PACKAGE
    checkout = package.parent
    if installed.is_dir() or not (checkout / "pyproject.toml").is_file():
        return installed
    return checkout / "tools.d"


def user_tools_dir() -> Path:
    """The per-user tools directory, e.g. ~/.config/toolcall/tools.d on Linux."""
    from toolcall_cli.private_files import app_dir

    return app_dir() / "tools.d"


def tool_dirs(
    extra: Sequence[Path], *, include_bundled: bool, cwd: Path, implicit: bool = True
) -> list[Path]:
    """Where tools come from, in load order: bundled, user, ./tools.d, then each --tools DIR.

    Each directory comes once. Left out, the bundled dir stays out even when it is ./tools.d
    (running from the source checkout); naming it with --tools brings it back. `implicit`
    False: the user's and ./tools.d stay out, only the named ones (and the bundled) load: the
    library's ask() given its own tools offers those alone."""
    bundled = bundled_tools_dir().resolve()
    found = [user_tools_dir(), cwd / "tools.d"] if implicit else []
    if include_bundled:
        found.insert(0, bundled)
    else:
        found = [path for path in found if path.resolve() != bundled]
    named = [cwd / path for path in extra]
    return list(dict.fromkeys(path.resolve() for path in [*found, *named]))


def load_tools(dirs: Sequence[Path], *, deadline: float = IMPORT_DEADLINE) -> LoadResult:
    """Load every `*.py` (not starting with `_`) of each dir, in sorted order.

    A missing dir is skipped (one the user named was refused before: see the app's
    load_plugins). A file byte-identical to one already loaded is the same plugin reached by
    another path (an installed copy of the bundled tools and the repository's tools.d, or a
    copy in the user dir): it is skipped silently rather than reported as clashing with itself.
    `deadline`: seconds each file's import may take (see plugin_guard).
    """
    result = LoadResult(dirs=list(dirs))
    loaded: set[str] = set()
    for directory in dirs:
        if not directory.is_dir():
            continue
        for path, identity in plugin_files(directory, loaded):
            load_file(path, result, identity=identity, deadline=deadline)
    return result


def plugin_files(directory: Path, seen: set[str]) -> list[tuple[Path, str | None]]:
    """The plugin files of one tools.d directory, in load order, each with its identity (see
    plugin_identity): those byte-identical to one `seen` before left out, the others added."""
    found: list[tuple[Path, str | None]] = []
    for path in sorted(directory.glob("*.py")):
        if is_plugin_name(path.name) and path.is_file():
            identity = plugin_identity(path)
            if identity not in seen:
                found.append((path, identity))
            if identity is not None:
                seen.add(identity)
    return found


def is_plugin_name(name: str) -> bool:
    """`weather.py` is a plugin; `_helpers.py` (the underscore: not loaded) is not."""
    return name.endswith(".py") and not name.startswith("_")


def plugin_identity(path: Path) -> str | None:
    """A digest of the file's bytes; None when it cannot be read (loading it will say why)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def load_file(
    path: Path,
    result: LoadResult,
    *,
    identity: str | None = None,
    deadline: float = IMPORT_DEADLINE,
) -> None:
    """Import one plugin file and register the tools it defines into `result`."""
    plugin = PluginFile(path=path, identity=identity)
    result.plugins.append(plugin)
    found = load_plugin(path, deadline=deadline)
    if isinstance(found, str):
        result.problems.append(f"{display_path(path)}: could not load: {found}")
        return
    result.problems += [f"{display_path(path)}: {problem}" for problem in found.problems]
    plugin.tools = list(found.tools)
    for item in found.tools:  # a name already taken stays with the first tool loaded
        existing = result.registry.get(item.name)
        if existing is None:
            result.registry.add(item)
        else:
            result.problems.append(clash_line(item, existing))


def load_plugin(
    path: Path, *, fresh: bool = False, deadline: float = IMPORT_DEADLINE
) -> PluginTools | str:
    """The file's tools, or why it could not be loaded (`NameError: ... (line 3)`, `hung at
    import for more than 10 s (line 2)`). Whatever the plugin does is its own problem: any
    exception (KeyboardInterrupt and SystemExit too), os._exit, an import running past
    `deadline`. Only the user's Ctrl-C stops the loading. `fresh`: see import_plugin."""
    guard = ImportGuard(deadline)
    try:
        with guard:  # up while the problem is described too: that runs the plugin's __str__
            found = _tools_or_problem(path, fresh)
    except ImportStopped as stopped:  # the guard's alarm, between two steps of our own
        found = str(stopped)
    if guard.interrupted:
        raise KeyboardInterrupt  # the user pressed Ctrl-C while it loaded: stop, as anywhere
    return found


def _tools_or_problem(path: Path, fresh: bool) -> PluginTools | str:
    try:
        return plugin_tools(path, fresh=fresh)
    except BaseException as error:  # a plugin may raise anything: SystemExit, GeneratorExit, ...
        return describe_import_error(error, path)


@dataclass
class PluginTools:
    """What one plugin file defines: its tools, and one line per definition that was skipped."""

    tools: list[Tool] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    definition_errors: list[str] = field(default_factory=list)
    """The problems that are a tool the file meant to define and could not (also in
    `problems`): a reload keeps the file's last good version rather than lose that tool."""


def plugin_tools(path: Path, *, fresh: bool = False) -> PluginTools:
    """Import `path` and build its tools. Raises whatever the plugin raised, at import or while
    its names are looked at (a module-level object's `__getattr__` runs plugin code too).
    `fresh`: compiled from the file's text as it is now (see import_plugin)."""
    start = len(MARKED)
    try:
        # Whatever a plugin prints while it loads goes to stderr: stdout belongs to the output
        # (e.g. --json lines) and must not be polluted.
        with contextlib.redirect_stdout(sys.stderr):
            module = import_plugin(path, fresh=fresh)
    finally:
        marked, MARKED[start:] = MARKED[start:], []
    found = PluginTools(problems=replaced_definitions(marked, module))
    for func in defined_tools(module):
        if not inspect.isfunction(func):
            kind = "class" if inspect.isclass(func) else type(func).__name__
            name = getattr(func, "__name__", "?")
            found.problems.append(f"skipped `{name}`: @tool marks functions, not a {kind}")
            found.definition_errors.append(found.problems[-1])
            continue
        try:
            found.tools.append(Tool.from_function(func, source=str(path)))
        except ToolDefinitionError as error:
            found.problems.append(f"skipped tool: {' '.join(str(error).split())}")
            found.definition_errors.append(found.problems[-1])
    return found


def replaced_definitions(marked: list[Any], module: types.ModuleType) -> list[str]:
    """Tools a later definition of the same name in the same file replaced: Python keeps only
    the last, so the earlier one would vanish without a word."""
    seen: dict[str, int] = {}
    for func in marked:
        if getattr(func, "__module__", None) == module.__name__:
            options = tool_options(func)
            name = str((options.name if options else None) or getattr(func, "__name__", "?"))
            seen[name] = seen.get(name, 0) + 1
    return [
        f"tool `{name}` is defined {count} times in this file; only the last one is used"
        for name, count in seen.items()
        if count > 1
    ]


def clash_line(item: Tool, existing: Tool) -> str:
    """The one line for a tool left out because another source has its name."""
    return (
        f"{display_path(Path(item.source))}: tool `{item.name}` skipped: "
        f"the name is already used by {display_path(Path(existing.source))}"
    )


class _FreshSourceLoader(importlib.machinery.SourceFileLoader):
    """Compiles the file's text as it is now. The usual loader may run the __pycache__ copy
    instead: it is trusted while the file's size and whole-second mtime match, which an edit
    made within the same second as the last load, keeping the size, does not change."""

    def get_code(self, fullname: str) -> types.CodeType:
        path = self.get_filename(fullname)
        return self.source_to_code(self.get_data(path), path)


def import_plugin(path: Path, *, fresh: bool = False) -> types.ModuleType:
    """Run a plugin file as its own module, without touching sys.path. `fresh`: from its text
    as it is now, never from a cached compilation (a reload must run the new code)."""
    name = module_name(path)
    loader = _FreshSourceLoader(name, str(path)) if fresh else None
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path.name}")
    module = importlib.util.module_from_spec(spec)
    # Registered so dataclasses, pickling and postponed annotations in the plugin can find it.
    previous = sys.modules.get(name)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        # A reload that failed leaves the last good version where its tools look it up.
        if previous is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = previous
        raise
    return module


def module_name(path: Path) -> str:
    """A stable, unique module name per file, so two `weather.py` in two dirs never clash."""
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:10]
    stem = re.sub(r"\W", "_", path.stem)
    return f"{_MODULE_PREFIX}_{stem}_{digest}"


def defined_tools(module: types.ModuleType) -> list[Callable[..., Any]]:
    """Marked functions defined in `module` itself; imported ones (even marked) are not its own."""
    found: list[Callable[..., Any]] = []
    for value in list(vars(module).values()):
        if tool_options(value) is None or not callable(value):
            continue
        if getattr(value, "__module__", None) == module.__name__ and value not in found:
            found.append(value)
    return found


def describe_import_error(error: BaseException, path: Path) -> str:
    """`NameError: name 'x' is not defined (line 3)`: type, message and the plugin's line."""
    if isinstance(error, ImportStopped):  # the guard's own words: `hung at import for ...`
        text = str(error)
        line = _plugin_line(error, path)
    elif isinstance(error, SyntaxError):
        text = f"{type(error).__name__}: {error.msg}"
        line = error.lineno
    else:
        message = short_message(error)
        text = f"{type(error).__name__}: {message}" if message else type(error).__name__
        line = _plugin_line(error, path)
    return f"{text} (line {line})" if line else text


def short_message(error: BaseException) -> str:
    """The error's message on one bounded line: a plugin chooses it, and may make it anything
    (`sys.exit("x" * 10**6)`, or a `__str__` that raises)."""
    try:
        message = " ".join(str(error).split())
    except BaseException:  # the plugin's own code, even a KeyboardInterrupt it raises
        return "(its message could not be read)"
    if len(message) <= MAX_MESSAGE_CHARS:
        return message
    return f"{message[:MAX_MESSAGE_CHARS]}… ({len(message):,} characters)"


def _plugin_line(error: BaseException, path: Path) -> int | None:
    """The deepest line of the traceback that is in the plugin file itself."""
    target = str(path.resolve())
    line = None
    for frame in traceback.extract_tb(error.__traceback__):
        if frame.filename and str(Path(frame.filename).resolve()) == target:
            line = frame.lineno
    return line


def display_path(path: Path) -> str:
    """A short path for messages: relative to the working dir when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):  # outside the working dir, or the working dir is gone
        return str(path)
