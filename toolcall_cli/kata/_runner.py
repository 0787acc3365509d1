"""The process that runs a user's kata file: `python -m toolcall_cli.kata._runner`, started in
the sandbox (see _keeper). It does what the judge asks of the user's code and sends back what
the code returned, as data. It decides nothing: every verdict is the judge's, in another
process, so that nothing the user's code does here can make a case pass."""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import os
import queue
import signal
import socket
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

from toolcall_cli.kata._values import Lines, Unsendable, decode, encode, pack

USER_MODULE = "kata_under_check"
FAILURE_CHARS = 2000
"""How much of an exception's message goes back (a verdict shows 400 characters)."""


class CaseTimeout(BaseException):
    """The request ran past its limit (raised by the timer, inside the user's code). Not an
    Exception, so that a loop's `except Exception` cannot swallow it; code that does not yield
    to the timer is the judge's to stop, with its whole sandbox."""


class Refused(RuntimeError):
    """A request a real server answers with 400 Bad Request (as the judge's chat says)."""


def on_alarm(signum: int, frame: FrameType | None) -> None:
    raise CaseTimeout


class Channel:
    """The socket to the judge: one JSON line per message each way. One thread reads: the
    judge's requests go to the main thread, its replies to chat() go to the thread that asked."""

    def __init__(self, fd: int) -> None:
        self.socket = socket.socket(fileno=fd)
        self.sending = threading.Lock()
        self.requests: queue.Queue[dict[str, Any]] = queue.Queue()
        self.waiting: dict[int, queue.Queue[dict[str, Any]]] = {}
        self.ids = itertools.count(1)

    def send(self, **message: Any) -> None:
        line = encode(message)
        with self.sending, timer_held():
            self.socket.sendall(line)

    def read_forever(self) -> None:
        """Until the judge is gone; then this process has nothing left to do."""
        lines = Lines()
        while True:
            data = self.socket.recv(1 << 20)
            if not data:
                os._exit(0)
            for line in lines.feed(data):
                message = decode(line)
                if "reply" not in message:
                    self.requests.put(message)
                elif (asked := self.waiting.pop(message["reply"], None)) is not None:
                    asked.put(message)

    def ask(self, **message: Any) -> dict[str, Any]:
        """Send and wait for the judge's reply (from any thread)."""
        number = next(self.ids)
        answer: queue.Queue[dict[str, Any]] = queue.Queue()
        self.waiting[number] = answer
        self.send(ask=number, **message)
        return answer.get()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="toolcall_cli.kata._runner")
    parser.add_argument("--channel-fd", type=int, required=True)
    options = parser.parse_args(argv)
    sys.dont_write_bytecode = True  # no __pycache__ beside the user's file
    for stream in (sys.stdout, sys.stderr):  # what it printed is kept even if it is killed
        stream.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    if hasattr(signal, "SIGALRM"):
        signal.signal(signal.SIGALRM, on_alarm)
    channel = Channel(options.channel_fd)
    threading.Thread(target=channel.read_forever, name="judge", daemon=True).start()
    user: ModuleType | None = None
    while True:
        request = channel.requests.get()
        if request.get("op") == "load":
            user, answer = load(request)
        else:
            answer = serve(request, user, channel)
        try:
            channel.send(done=request.get("number"), **answer)
        except Unsendable as error:
            channel.send(done=request.get("number"), raised=f"returned {error}")


def serve(request: dict[str, Any], user: ModuleType | None, channel: Channel) -> dict[str, Any]:
    """Do what the judge asks, under its time limit; say what came of it."""
    if user is None:
        return {"raised": "the file is not loaded"}
    path = Path(user.__file__ or "")
    work = WORK.get(str(request.get("op")))
    if work is None:
        return {"raised": f"no such request: {request.get('op')!r}"}
    try:
        prepared = work.prepare(request)  # toolcall's part: not on the user's clock
        with timer(float(request["limit"])):
            returned = work.run(user, request, channel, prepared)
        return {"returned": pack(returned)}
    except CaseTimeout:
        return {"timeout": True}
    except MemoryError:
        return {"memory": True}
    except Unsendable as error:
        return {"raised": f"returned a value that cannot be graded: {error}"}
    except BaseException as error:  # even SystemExit: the user's code is what failed
        return {"raised": failure(error, path)}


@dataclass(frozen=True)
class Work:
    """One kind of request: what toolcall prepares for it, then what runs on the user's clock."""

    run: Callable[[ModuleType, dict[str, Any], Channel, Any], Any]
    prepare: Callable[[dict[str, Any]], Any] = lambda request: None


def call(user: ModuleType, request: dict[str, Any], channel: Channel, arguments: Any) -> Any:
    return getattr(user, request["function"])(*arguments)


def samples(request: dict[str, Any]) -> Any:
    """The arguments with each sample function named in them made (see _samples)."""
    from toolcall_cli.kata._samples import with_functions

    return with_functions(request["arguments"])


def parsers(user: ModuleType, request: dict[str, Any], channel: Channel, prepared: Any) -> Any:
    """Steps on StreamParser objects: ["new"], ["feed", n, chunk], ["close", n]."""
    made: list[Any] = []
    returned: list[Any] = []
    for step in request["steps"]:
        if step[0] == "new":
            made.append(user.StreamParser())
            returned.append(None)
        elif step[0] == "feed":
            returned.append(made[step[1]].feed(step[2]))
        else:
            returned.append(made[step[1]].close())
    return returned


def toolbox(request: dict[str, Any]) -> Any:
    from toolcall_cli.kata._toolbox import make_toolbox

    return make_toolbox(request["toolbox"])


def agent_loop(user: ModuleType, request: dict[str, Any], channel: Channel, box: Any) -> Any:
    number = request["number"]

    def chat(messages: list[dict[str, Any]]) -> dict[str, Any]:
        try:
            sent: Any = json.loads(json.dumps(messages))
            unsendable = None
        except (TypeError, ValueError, RecursionError) as error:
            sent, unsendable = None, str(error)
        answer = channel.ask(chat=number, messages=sent, unsendable=unsendable)
        if "refused" in answer:
            raise Refused(str(answer["refused"]))
        message: dict[str, Any] = answer["message"]
        return message

    try:
        return user.agent_loop(
            chat,
            box.functions,
            request["question"],
            request["max_iterations"],
            **request["options"],
        )
    finally:
        box.released.set()  # a tool left hanging on purpose ends with its case


WORK: dict[str, Work] = {
    "call": Work(call, lambda request: request["arguments"]),
    "call_on_samples": Work(call, samples),
    "parsers": Work(parsers),
    "loop": Work(agent_loop, toolbox),
}


def load(request: dict[str, Any]) -> tuple[ModuleType | None, dict[str, Any]]:
    """The user's file as a module, or one line saying why it cannot be used."""
    path = Path(request["file"])
    spec = importlib.util.spec_from_file_location(USER_MODULE, path)
    if spec is None or spec.loader is None:
        return None, {"load_error": f"{path.name} cannot be imported as Python"}
    module = importlib.util.module_from_spec(spec)
    sys.modules[USER_MODULE] = module  # dataclasses and the like look their module up
    sys.path.append(str(path.parent))  # its own helper modules, after everything else
    limit = float(request["limit"])
    try:
        with timer(limit):
            spec.loader.exec_module(module)
    except CaseTimeout:
        return None, {"load_error": f"importing {path.name} did not finish within {limit:g} s"}
    except SyntaxError as error:
        return None, {"load_error": f"{path.name}, line {error.lineno}: SyntaxError: {error.msg}"}
    except BaseException as error:  # even SystemExit: the file is what failed, say so
        return None, {"load_error": f"importing {path.name} raised {failure(error, path)}"}
    required: list[str] = request["required"]
    missing = [name for name in required if not callable(getattr(module, name, None))]
    if missing:
        kata = request["kata"]
        return None, {
            "load_error": f"{path.name} does not define {' and '.join(missing)} "
            f"(kata {kata} needs it)"
        }
    return module, {"loaded": True}


@contextmanager
def timer_held() -> Iterator[None]:
    """The timer's signal waits until a message is out whole: half a line would be garbage
    to the judge."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


@contextmanager
def timer(seconds: float) -> Iterator[None]:
    """Raise CaseTimeout in this thread after `seconds` (where SIGALRM exists)."""
    if hasattr(signal, "setitimer"):
        signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001))
    try:
        yield
    finally:
        if hasattr(signal, "setitimer"):
            signal.setitimer(signal.ITIMER_REAL, 0)


def failure(error: BaseException, path: Path) -> str:
    """`Type: message`, with the line of the user's file it came from when there is one."""
    try:
        text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    except Exception:  # an exception whose __str__ raises: its type says enough
        text = type(error).__name__
    text = text if len(text) <= FAILURE_CHARS else text[: FAILURE_CHARS - 3] + "..."
    frames = [f for f in traceback.extract_tb(error.__traceback__) if Path(f.filename) == path]
    return f"{text} ({path.name}, line {frames[-1].lineno})" if frames else text


if __name__ == "__main__":
    main()
