"""The flags of the commands, made from the option groups (app/options.py declares each option
once, with its flag): a command names the groups it takes as parameters, and `@with_groups`
gives typer one flag per field instead, under the group's panel in `--help`; the command is
called with the groups built from the flags it was given.

typer reads a command's flags from `inspect.signature`, which returns `__signature__` when a
function has one: that is all the decorator changes.
"""

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, TypeVar

import typer
from typer.core import TyperCommand

from toolcall_cli.app.options import Flag, flags_of, option

try:  # typer >= 0.26 vendors click
    from typer._click import Context, HelpFormatter
except ImportError:  # pragma: no cover - older typer uses the click package
    from click import Context, HelpFormatter  # type: ignore[import-not-found, no-redef, assignment, unused-ignore]

Command = TypeVar("Command", bound=Callable[..., Any])


class Without:
    """`Annotated[Endpoint, Without("read_timeout")]`: the command takes the group's flags but
    these, which keep their defaults."""

    def __init__(self, *names: str) -> None:
        self.names = frozenset(names)

    def leaves_out(self, group: type) -> frozenset[str]:
        return self.names


class Only(Without):
    """`Annotated[StrategyOptions, Only("strategy")]`: the command takes these flags of the
    group alone; the others keep their defaults."""

    def leaves_out(self, group: type) -> frozenset[str]:
        return frozenset(name for name, *_ in flags_of(group)) - self.names


# --- the command line's own groups ------------------------------------------------------------


Language = Literal["en", "zh"]


@dataclass(frozen=True)
class Output:
    """How `run` shows the run."""

    PANEL: ClassVar[str] = "Output"
    quiet: bool = option(False, "--quiet", "-q", help="Print only the final answer.")
    as_json: bool = option(False, "--json", help="Print one JSON event per line.")
    show_request: bool = option(
        False, "--show-request", help="Show each request body as sent (live view)."
    )


@dataclass(frozen=True)
class Stepping:
    """A run for learning: paused at each step, with notes on each."""

    PANEL: ClassVar[str] = "Step by step"
    step: bool = option(
        False,
        "--step",
        help="Pause before each model request and each tool execution: Enter goes on, e "
        "edits the call's arguments, s skips the call, q stops the run (needs a terminal).",
    )
    explain: bool = option(
        False,
        "--explain",
        help="A short note at each step: which layer acted (protocol, execution, loop) and why.",
    )
    lang: Language | None = option(
        None,
        "--lang",
        help="The language of --explain's notes and --step's pauses (default: the "
        "question's, zh or en).",
    )


@dataclass(frozen=True)
class TraceFile:
    """Where a run's trace goes."""

    PANEL: ClassVar[str] = "Trace"
    trace: Path | None = option(
        None,
        "--trace",
        metavar="FILE",
        help="Write the trace (every event as JSON lines) to this file instead of the trace "
        "directory (`toolcall trace list`).",
    )
    no_trace: bool = option(
        False, "--no-trace", help="Write no trace (config: trace = false in [defaults])."
    )


# --- groups as flags --------------------------------------------------------------------------


def leaves(group: type) -> Iterator[type]:
    """The groups whose fields are flags (SessionOptions is a group of groups)."""
    if hasattr(group, "PANEL"):
        yield group
        return
    for part in parts_of(group).values():
        yield from leaves(part)


def built(group: type, given: Mapping[str, Any]) -> Any:
    """`group` (or a group of groups) with the values `given` has for its fields."""
    if not hasattr(group, "PANEL"):
        return group(**{name: built(part, given) for name, part in parts_of(group).items()})
    values = {}
    for name, kind, _, _ in flags_of(group):
        if name in given:
            values[name] = tuple(given[name] or ()) if is_tuple(kind) else given[name]
    return group(**values)


@functools.cache
def parts_of(composite: type) -> dict[str, type]:
    """The groups a group of groups is made of, by field name."""
    return typing.get_type_hints(composite)


def is_tuple(kind: Any) -> bool:
    return typing.get_origin(kind) is tuple


@functools.cache
def flag_parameters(group: type, without: frozenset[str]) -> tuple[inspect.Parameter, ...]:
    """A group's flags as typer parameters, made once for every command that takes them (typer
    copies what it changes)."""
    return tuple(
        flag_parameter(name, kind, flag, default, vars(group)["PANEL"])
        for name, kind, flag, default in flags_of(group)
        if name not in without
    )


def flag_parameter(name: str, kind: Any, flag: Flag, default: Any, panel: str) -> inspect.Parameter:
    """The typer parameter of one option, its OptionInfo as the default (typer's other way to
    say it, which spares building an Annotated type per flag). A repeatable option (a tuple) is
    a list to typer, None when not given."""
    metavar = flag.metavar or choices_metavar(kind)
    if metavar is None and kind is not bool:
        raise TypeError(f"{flag.names[0]}: its value needs a placeholder (metavar=)")
    if is_tuple(kind):
        kind, default = list[typing.get_args(kind)[0]] | None, None  # type: ignore[misc]
    info = typer.Option(
        default,
        *flag.names,
        help=flag.help,
        min=flag.min,
        max=flag.max,
        metavar=metavar,
        rich_help_panel=panel,
    )
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=kind)


def choices_metavar(kind: Any) -> str | None:
    """`[regex|schema|stream]` for a flag of choices (a Literal, or one or None); else None."""
    for part in (kind, *typing.get_args(kind)):
        if typing.get_origin(part) is Literal:
            return "[" + "|".join(map(str, typing.get_args(part))) + "]"
    return None


def grouped(hint: Any) -> tuple[type, frozenset[str]] | None:
    """The group a parameter's type names, and the fields left out of its flags; None when it
    names no group."""
    extras: tuple[Any, ...] = ()
    if typing.get_origin(hint) is Annotated:
        hint, *rest = typing.get_args(hint)
        extras = tuple(rest)
    if not (isinstance(hint, type) and dataclasses.is_dataclass(hint)):
        return None
    narrowed = next((extra for extra in extras if isinstance(extra, Without)), None)
    return hint, narrowed.leaves_out(hint) if narrowed else frozenset()


def with_groups(command: Command) -> Command:
    """The command with one flag per field of each group it takes (see the module's doc)."""
    hints = typing.get_type_hints(command, include_extras=True)
    own: list[inspect.Parameter] = []
    groups: dict[str, type] = {}
    flags: list[inspect.Parameter] = []
    for param in inspect.signature(command).parameters.values():
        found = grouped(hints.get(param.name))
        if found is None:
            own.append(param.replace(annotation=hints.get(param.name, param.annotation)))
            continue
        group, without = found
        groups[param.name] = group
        flags += [flag for leaf in leaves(group) for flag in flag_parameters(leaf, without)]
    names = [param.name for param in own + flags]
    if len(names) != len(set(names)):
        raise TypeError(f"{command.__name__}: two flags of the same name")
    own_names = {param.name for param in own}

    @functools.wraps(command)
    def call(**given: Any) -> Any:
        own_values = {name: value for name, value in given.items() if name in own_names}
        group_values = {name: built(group, given) for name, group in groups.items()}
        return command(**own_values, **group_values)

    signature = inspect.Signature(own + flags)
    call.__signature__ = signature  # type: ignore[attr-defined]
    call.__annotations__ = {p.name: p.annotation for p in signature.parameters.values()}
    return typing.cast(Command, call)


# --- --help, panel by panel -------------------------------------------------------------------


class PanelledCommand(TyperCommand):
    """A command whose `--help` lists its arguments, its own options, then each panel's; every
    command is one. An argument shows as its placeholder alone, in capitals (`QUESTION`, and
    `[NAME]` when it may be left out), as options do, not typer's `{question}` and `<str>`."""

    def collect_usage_pieces(self, ctx: Context) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name == "argument":
                name = argument_placeholder(param)
                pieces.append(name if param.required else f"[{name}]")
            else:
                pieces += param.get_usage_pieces(ctx)
        return pieces

    def format_options(self, ctx: Context, formatter: HelpFormatter) -> None:
        sections: dict[str, list[tuple[str, str]]] = {"Arguments": [], "Options": []}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            panel = getattr(param, "rich_help_panel", None)
            if param.param_type_name == "argument":
                panel = "Arguments"
                record = (argument_placeholder(param), record[1])
            sections.setdefault(panel or "Options", []).append(record)
        for title, rows in sections.items():
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


def argument_placeholder(param: Any) -> str:
    """An argument's placeholder: its metavar, else its name in capitals."""
    name = param.metavar or str(param.name).upper()
    return f"{name}..." if param.nargs != 1 else name
