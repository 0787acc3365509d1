"""`toolcall chat`: a prompt-toolkit conversation with history, completion and slash commands."""

from __future__ import annotations

import os
import re
import stat
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

import typer
from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import AnyFormattedText
from prompt_toolkit.history import FileHistory
from prompt_toolkit.input import Input
from prompt_toolkit.output import Output

from toolcall_cli.events import Event, Notice, RunFinished, RunStarted
from toolcall_cli.history import preview
from toolcall_cli.models.scripted import ScriptEnd, scripted_model
from toolcall_cli.private_files import PathProblem, app_dir, open_private, refuse_other_file
from toolcall_cli.render import RenderMode, make_renderer
from toolcall_cli.render.base import visible
from toolcall_cli.render.explain import Explain
from toolcall_cli.session import Session, answered
from toolcall_cli.strategies import STRATEGY_NAMES, UnknownStrategy
from toolcall_cli.tools.loader import is_plugin_name
from toolcall_cli.tools.reload import ToolReloader
from toolcall_cli.trace import RunProgress, TraceWriteError, TraceWriter

COMMANDS: dict[str, str] = {
    "/help": "show this help",
    "/tools": "list the loaded tools",
    "/strategy": "/strategy NAME: switch to regex, schema or stream (alone: show it)",
    "/model": "/model NAME: switch the model (offline, scripted, or a name at the endpoint)",
    "/reload": "load the changed tools.d files now (a change also reloads by itself)",
    "/reset": "forget the conversation so far",
    "/history": "show how many messages the conversation holds",
    "/exit": "leave (Ctrl-D works too)",
}


def default_history_file() -> Path:
    """Where chat keeps its input history unless told otherwise. toolcall's own app directory
    is made for it, owner-only, when missing (unlike a directory the user names)."""
    folder = app_dir()
    if not folder.is_dir():
        try:
            folder.mkdir(mode=0o700, parents=True)
            os.chmod(folder, 0o700)  # mkdir's mode passes through the umask
        except OSError as error:
            raise PathProblem(
                f"cannot make {folder} for the chat history: {error.strerror or error}; "
                "give --history-file PATH"
            ) from None
    return folder / "chat_history"


HISTORY_LINE = re.compile(rb"\A[#+]")
"""How each entry of prompt-toolkit's history file begins: `# when`, then `+` and a line."""
HISTORY_READ_LIMIT = 4 * 1024 * 1024
"""Bytes of the history file read at start (its end): years of typed questions, and a bound
on a path that names something else (a big log file)."""
ECHO_CHARS = 60
"""How much of a piped question too long to ask the transcript shows."""


class ChatHistory(FileHistory):
    """The input history file (prompt-toolkit's format), read and written so that no file
    stops the chat. Only a regular file is read, and only its last HISTORY_READ_LIMIT bytes:
    a device never ends (`/dev/zero`, `/dev/full`). A file that stops taking writes (a full
    disk) would make prompt-toolkit show its "unhandled exception" screen and wait for Enter;
    here the problem is kept for the chat to report once, and this session's lines stay in
    memory."""

    def __init__(self, path: Path) -> None:
        super().__init__(str(path))
        self.path = path
        self.problem: str | None = None

    def load_history_strings(self) -> Iterable[str]:
        try:
            data = read_tail(self.path, HISTORY_READ_LIMIT)
        except OSError as error:
            self._failed("read", error)
            return []
        return reversed(history_entries(data))

    def store_string(self, string: str) -> None:
        if self.problem is not None:
            return
        try:
            super().store_string(string)
        except OSError as error:
            self._failed("write", error)

    def _failed(self, doing: str, error: OSError) -> None:
        self.problem = (
            f"cannot {doing} the history file {self.path}: {error.strerror or error}; "
            "this session's input is not kept"
        )


def read_tail(path: Path, limit: int) -> bytes:
    """The last `limit` bytes of a regular file, from the start of an entry; nothing from
    anything else."""
    with open(path, "rb") as file:
        status = os.fstat(file.fileno())
        if not stat.S_ISREG(status.st_mode):
            return b""
        start = max(0, status.st_size - limit)
        file.seek(start)
        data = file.read(limit)
    if start > 0:  # cut mid-entry: begin at the next entry's `# timestamp` line
        mark = data.find(b"\n#")
        data = data[mark + 1 :] if mark >= 0 else b""
    return data


def history_entries(data: bytes) -> list[str]:
    """Entries oldest first: each is its `+`-prefixed lines, ended by any other line (as
    prompt-toolkit's FileHistory writes and reads them)."""
    entries: list[str] = []
    lines: list[str] = []
    for raw in data.splitlines(keepends=True):
        line = raw.decode("utf-8", errors="replace")
        if line.startswith("+"):
            lines.append(line[1:])
        elif lines:
            entries.append("".join(lines)[:-1])
            lines = []
    if lines:
        entries.append("".join(lines)[:-1])
    return entries


class SlashCompleter(Completer):
    """Completes slash commands, strategy names after /strategy, and tool names anywhere."""

    def __init__(self, session: Session) -> None:
        self._session = session

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        text = document.text_before_cursor
        word = document.get_word_before_cursor(WORD=True)
        if text.startswith("/strategy "):
            yield from _matching(word, STRATEGY_NAMES)
        elif text.startswith("/") and " " not in text:
            yield from _matching(word, COMMANDS)
        else:
            yield from _matching(word, self._session.registry.names())


def _matching(word: str, options: Iterable[str]) -> Iterable[Completion]:
    for option in options:
        if word and option.startswith(word):
            yield Completion(option, start_position=-len(word))


class Repl:
    def __init__(
        self,
        session: Session,
        *,
        history_file: Path,
        use_model: Callable[[str], None],
        pt_input: Input | None = None,
        pt_output: Output | None = None,
        mode: RenderMode | None = None,
        trace: TraceWriter | None = None,
        explain: Explain | None = None,
        reloader: ToolReloader | None = None,
        watch: bool = True,
    ) -> None:
        self.session = session
        self._reloader = reloader
        """The tools.d plugin files, reloaded when they change; None: nothing to reload."""
        self._watcher: ToolWatcher | None = None
        if reloader is not None and watch:
            self._watcher = ToolWatcher(reloader.watched_dirs(), self._changed_while_waiting)
        self._reload_notices: list[Notice] = []
        """What reloads said since the last turn began, for the trace (see ask)."""
        self._watch_problem_told = False
        self._explain = explain or Explain()
        """--explain: notes after each step of every question's run."""
        self._trace = trace
        """Where each question's run is recorded; None when the chat is not traced."""
        self.script_mismatch = False
        """The scripted model's script ran out, or was left with replies unused."""
        self._use_model = use_model
        """/model NAME: puts the model named in the session, with that model's own defaults;
        raises ModelConfigError when it cannot be made."""
        self._mode: RenderMode = mode or ("live" if sys.stdout.isatty() else "plain")
        # Checked (and made owner-only) before the chat starts; prompt-toolkit appends to it by
        # name afterwards, which keeps the mode. Raises PathProblem.
        refuse_other_file(history_file, "history file", HISTORY_LINE)
        os.close(open_private(history_file, "history file", readable=True))
        self._history = ChatHistory(history_file)
        self._history_problem_told = False
        self._piped = pt_input is None and not sys.stdin.isatty()
        """Questions come on a pipe (`toolcall chat < questions.txt`): read line by line, not
        by prompt-toolkit, which needs a terminal to edit in and read nothing from a pipe."""
        # No prompt at all on a pipe: prompt-toolkit would warn that the input is not a
        # terminal, a line that is no part of the answers.
        self._prompt: PromptSession[str] | None = (
            None
            if self._piped
            else PromptSession(
                history=self._history,
                completer=SlashCompleter(session),
                complete_while_typing=False,
                input=pt_input,
                output=pt_output,
                rprompt=self._reload_hint,
            )
        )

    def say(self, text: str) -> None:
        typer.echo(text)

    def loop(self) -> int:
        """Read questions until /exit or Ctrl-D (on a pipe: its end). Returns the exit code."""
        if not self._piped:  # on a pipe nobody types: no commands to offer, no key to leave by
            self.say(
                f"toolcall chat — model {self.session.model.name}, "
                f"strategy {self.session.strategy.name}. "
                "/help for commands, Ctrl-D to leave."
            )
        if self._watcher is not None:
            self._watcher.start()
        try:
            return self._converse()
        finally:
            if self._watcher is not None:
                self._watcher.stop()

    def _converse(self) -> int:
        while True:
            try:
                line = self._next_line()
            except KeyboardInterrupt:
                continue  # Ctrl-C at the prompt clears the line, as in a shell
            except EOFError:
                return self._leave()
            self._tell_history_problem()
            line = line.strip()
            if line != "/reload":  # /reload reloads (and says so) itself
                self._reload_if_changed()
            if not line:
                continue
            if line.startswith("/"):
                if self.command(line) == "exit":
                    return self._leave()
                continue
            self.ask(line)

    def _next_line(self) -> str:
        """The next question or command; EOFError at the end of the input."""
        if self._prompt is not None:
            return self._prompt.prompt("you> ")
        line = sys.stdin.readline()
        if not line:
            raise EOFError
        line = line.rstrip("\r\n")
        if len(line) > self.session.limits.max_question_chars:
            # The run refuses it as too long: the transcript says what came, not all of it, and
            # the history does not keep it.
            shown = visible(preview(line, ECHO_CHARS))
            self.say(f"you> {shown} ({len(line):,} characters)")
            return line
        self.say(f"you> {line}")  # the transcript shows what was asked, as on a terminal
        if line.strip() and not line.startswith("/"):
            self._history.append_string(line)
        return line

    def _leave(self) -> int:
        """The chat's end: replies its scripted model never played are told now."""
        for end in self._script_ends(final=True):
            typer.echo(f"toolcall: {end.message}", err=True)
        return 0

    def _script_ends(self, *, final: bool) -> list[ScriptEnd]:
        """How the script of a scripted model and the chat stopped lining up, if they did:
        recorded in the trace here, told by the caller."""
        script = scripted_model(self.session.model)
        ends = script.ends(final=final) if script is not None else []
        for end in ends:
            self.script_mismatch = True
            if self._trace is not None:
                try:
                    self._trace.script_end(end)
                except TraceWriteError as error:
                    self._trace_failed(error)
        return ends

    def _tell_history_problem(self) -> None:
        if self._history.problem and not self._history_problem_told:
            self._history_problem_told = True
            typer.echo(f"toolcall: warning: {self._history.problem}", err=True)

    def ask(self, question: str) -> None:
        shown = make_renderer(self._mode)
        renderer = self._explain.wrap(shown)
        progress = RunProgress()
        try:
            asked = self.session.ask(question)
            for event in answered(asked, self.session.answers, shown.suspended):
                progress.add(event)
                if isinstance(event, RunFinished):
                    for end in self._script_ends(final=False):
                        if not end.told_by_failure:  # the failure said it where it happened
                            renderer.handle(Notice(level="warning", message=end.message))
                self._record(event)
                renderer.handle(event)
                if isinstance(event, RunStarted):
                    self._record_reloads()
        except KeyboardInterrupt:
            renderer.close()
            self._record_end(progress)
            self.say("(turn cancelled; the conversation is as it was before it)")
            return
        except BaseException:
            renderer.close()
            self._record_end(progress)  # a bug: the chat command ends the trace after it
            raise
        renderer.close()

    def _record(self, event: Event) -> None:
        """Write the event to the trace. A trace that stops taking writes (a full disk) is
        given up with one warning: the conversation matters more than its record."""
        if self._trace is None:
            return
        try:
            self._trace.write(event)
        except TraceWriteError as error:
            self._trace_failed(error)

    def _record_reloads(self) -> None:
        """What reloads said before this turn goes into the trace inside the turn's run: trace
        readers split a chat trace into runs, and a record between runs would be read as a
        run of its own."""
        notices, self._reload_notices = self._reload_notices, []
        for notice in notices:
            self._record(notice)

    def _trace_failed(self, error: TraceWriteError) -> None:
        if self._trace is not None:
            self._trace.close()
            self._trace = None
        typer.echo(f"toolcall: warning: {error}; the chat goes on without a trace", err=True)

    def _record_end(self, progress: RunProgress) -> None:
        """A turn cut short ends in the trace as the loop would have ended it."""
        if not progress.finished:
            self._record(progress.interrupted())

    def command(self, line: str) -> str | None:
        name, _, arg = line.partition(" ")
        arg = arg.strip()
        if name in ("/exit", "/quit"):
            return "exit"
        if name == "/help":
            for command, text in COMMANDS.items():
                self.say(f"  {command:<10} {text}")
        elif name == "/tools":
            for tool in self.session.registry:
                summary = tool.spec.description.splitlines()[0] if tool.spec.description else ""
                self.say(f"  {tool.spec.name:<16} {summary}")
        elif name == "/strategy":
            self._switch_strategy(arg)
        elif name == "/model":
            self._switch_model(arg)
        elif name == "/reload":
            self.reload_tools(forced=True)
        elif name == "/reset":
            self.session.reset()
            self.say("Conversation cleared.")
        elif name == "/history":
            self.say(f"The conversation holds {len(self.session.history)} messages.")
        else:
            self.say(f"Unknown command {name}; /help lists them.")
        return None

    def _switch_strategy(self, name: str) -> None:
        if not name:
            self.say(
                f"The strategy is {self.session.strategy.name}. "
                f"/strategy NAME switches it ({', '.join(STRATEGY_NAMES)})."
            )
            return
        try:
            self.session.use_strategy(name)
        except UnknownStrategy as error:
            self.say(str(error))
            return
        self.say(f"Strategy is now {name}.")

    def _switch_model(self, name: str) -> None:
        from toolcall_cli.models import ModelConfigError

        if not name:
            self.say(f"The model is {self.session.model.name}. /model NAME switches it.")
            return
        try:
            self._use_model(name)
        except ModelConfigError as error:
            self.say(str(error))
            return
        self.say(f"Model is now {self.session.model.name}.")

    def _reload_if_changed(self) -> None:
        """Between turns: the plugin files the watcher saw change are loaded now, never in the
        middle of a turn."""
        watcher = self._watcher
        if watcher is None:
            return
        if watcher.problem is not None and not self._watch_problem_told:
            self._watch_problem_told = True
            typer.echo(f"toolcall: warning: {watcher.problem}", err=True)
        if watcher.changed.is_set():
            self.reload_tools(forced=False)

    def reload_tools(self, *, forced: bool) -> None:
        """Reload the changed plugin files and say what that changed, one line each; `forced`
        (/reload) also says when nothing did."""
        if self._watcher is not None:
            # Cleared first: a change made while this reload reads the files sets it again.
            self._watcher.changed.clear()
        if self._reloader is None:
            if forced:
                self.say("No tools.d directories to reload in this chat.")
            return
        try:
            report = self._reloader.reload(self.session.registry)
        except KeyboardInterrupt:
            self.say("(reload cancelled; the tools are as they were)")
            return
        if report.nothing_changed and forced:
            self.say("reload: nothing changed")
        for change in report.changes:
            # "Always" was said of the code the user saw run: new code, or a tool gone, asks
            # again (a dangerous tool's new version must not run unasked).
            if change.kind != "changed" or set(change.what) - {"spec"}:
                self.session.policy.always.discard(change.name)
        for notice in report.notices():
            if notice.level == "info":
                self.say(notice.message)
            else:
                typer.echo(f"toolcall: {notice.level}: {notice.message}", err=True)
            self._reload_notices.append(notice)

    def _changed_while_waiting(self) -> None:
        """From the watcher's thread: redraw the prompt, so its hint shows the change."""
        if self._prompt is not None:
            self._prompt.app.invalidate()

    def _reload_hint(self) -> AnyFormattedText:
        """The prompt's right side: tells that a plugin file changed and reloads on Enter."""
        if self._watcher is not None and self._watcher.changed.is_set():
            return [("fg:ansiyellow", RELOAD_HINT)]
        return ""


RELOAD_HINT = "tools changed · reloaded on Enter"


class ToolWatcher:
    """Watches the tools.d directories (watchfiles) in a thread of its own. It only marks that
    a plugin file was written, made or deleted: the chat reloads between turns, in its own
    thread, so no plugin is imported while a turn runs."""

    def __init__(self, dirs: list[Path], on_change: Callable[[], None]) -> None:
        self.changed = threading.Event()
        self.problem: str | None = None
        """Why watching stopped (a watched directory was removed, say); /reload still works."""
        self._dirs = dirs
        self._on_change = on_change
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if not self._dirs:
            return
        self._thread = threading.Thread(target=self._watch, name="tools.d watcher", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop watching; watchfiles looks at the stop event between its short waits."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _watch(self) -> None:
        try:
            import watchfiles  # imported here: only a chat with tools.d needs it

            for _ in watchfiles.watch(
                *self._dirs,
                watch_filter=lambda _change, path: is_plugin_name(Path(path).name),
                stop_event=self._stop,
                recursive=False,  # the loader reads only the directory's own files
                raise_interrupt=False,
            ):
                self.changed.set()
                self._on_change()
        except Exception as error:  # the chat goes on without watching, and says so once
            self.problem = (
                f"tools.d is no longer watched ({type(error).__name__}: {error}); "
                "/reload still reloads"
            )
