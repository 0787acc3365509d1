"""A model that replays given replies in order: the test double at the model boundary, and
the way a recorded run is played again offline.

Each reply is the assistant's content text, or a whole assistant `message` dict (for
`tool_calls`; an optional `finish_reason` key overrides the default): it answers in whatever
shape the request asks for, like a real server. A reply recorded in a trace (`RecordedReply`)
is played back exactly as the model sent it instead: chunk by chunk if it was streamed.
"""

from __future__ import annotations

import json
import random
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from toolcall_cli.models import ModelConfigError
from toolcall_cli.private_files import read_bounded
from toolcall_cli.strictjson import json_type_in_words
from toolcall_cli.wire import ModelError, ModelRequest, WireFormat
from toolcall_cli.wire.completions import AssistantOutput, WireCall, respond

SCRIPT_LIMIT = 256 << 20
"""Bytes of a script read at most: a trace replayed as a script holds whole requests."""


@dataclass(frozen=True)
class RecordedReply:
    """One reply as a trace recorded it, to be played back as the model sent it."""

    chunks: tuple[dict[str, Any], ...]
    """The `chat.completion.chunk` objects of a streamed reply, or the one `chat.completion`
    of a reply that was not streamed; none when the request failed before any arrived."""
    streamed: bool
    failure: tuple[str, str] | None = None
    """The model's own failure, `(message, kind)`, raised after the chunks as it happened."""
    said: str = ""
    """The server's own words for the failure, where the model was told them (a reply its
    server could not read)."""


Reply = str | dict[str, Any] | RecordedReply


@dataclass(frozen=True)
class Recording:
    """Where a script of recorded replies came from, and in what format they were sent."""

    path: Path
    wire: WireFormat
    """The format the recording's first request asked for: a request in any other cannot be
    answered with these replies."""
    strategy: str
    """The flags of the strategy that recorded it (`--strategy schema --schema-mode tools`)."""


ScriptEndKind = Literal["script_exhausted", "script_unused"]


@dataclass(frozen=True)
class ScriptEnd:
    """The script and the run did not line up: a request found no reply left, or the run
    ended with replies never asked for. Told in the view, the trace and the exit code."""

    kind: ScriptEndKind
    message: str
    replies: int
    """How many replies the script holds."""
    requests: int
    """How many requests asked for one."""

    @property
    def told_by_failure(self) -> bool:
        """Whether the run already said it where it happened: a script that runs out fails the
        request that found no reply, with this message, so a view need not say it again."""
        return self.kind == "script_exhausted"


class ScriptedModel:
    """Replays `replies`, one per request; `requests` keeps every body it was sent."""

    name = "scripted"

    def __init__(self, replies: Sequence[Reply], *, recording: Recording | None = None) -> None:
        self.replies: list[Reply] = [
            check_reply(reply, f"reply {number}") for number, reply in enumerate(replies, 1)
        ]
        self.requests: list[dict[str, Any]] = []
        self.recording = recording
        """Set when the replies were read from a trace."""
        self._exhausted_at: int | None = None
        """The first request that found no reply left."""
        self._told: set[ScriptEndKind] = set()

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedModel:
        """Replies from a JSON list, or JSONL with one reply (a JSON string or object) a line.
        Raises OSError, or ValueError naming the line (or item) and the key that is wrong."""
        return cls.from_bytes(read_bounded(Path(path), SCRIPT_LIMIT))

    @classmethod
    def from_bytes(cls, data: bytes) -> ScriptedModel:
        """As from_file, from a script file's bytes. Raises ValueError."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ValueError(f"not valid UTF-8 at byte offset {error.start}") from None
        return cls(parse_script(text))

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        number = len(self.requests) + 1
        self.requests.append(request.body)
        if number > len(self.replies):
            if self._exhausted_at is None:
                self._exhausted_at = number
            raise ModelError(ran_out(len(self.replies), number), kind="protocol")
        reply = self.replies[number - 1]
        if isinstance(reply, RecordedReply):
            yield from played_back(reply, request, number)
            return
        output = scripted_output(reply, number)
        # Chunking is fixed per request number, so a replay splits the same way every time.
        rng = random.Random(f"scripted:{number}")
        yield from respond(request.body, output, response_id=f"chatcmpl-scripted-{number}", rng=rng)

    def ends(self, *, final: bool) -> list[ScriptEnd]:
        """What has not been told yet of how the script and the run(s) failed to line up: the
        script running out, and (once the last run is over: `final`) replies left unused."""
        ends: list[ScriptEnd] = []
        count, asked = len(self.replies), len(self.requests)
        if self._exhausted_at is not None and "script_exhausted" not in self._told:
            message = ran_out(count, self._exhausted_at)
            ends.append(ScriptEnd("script_exhausted", message, count, asked))
        left = count - asked
        if final and left > 0 and "script_unused" not in self._told:
            message = f"the script ended with {replies(left)} of {count} never asked for"
            ends.append(ScriptEnd("script_unused", message, count, asked))
        self._told.update(end.kind for end in ends)
        return ends

    def assert_complete(self) -> None:
        """Fail when replies are left over: the run stopped earlier than the script expected."""
        left = len(self.replies) - len(self.requests)
        if left > 0:
            raise AssertionError(
                f"{left} scripted repl{'y' if left == 1 else 'ies'} never requested"
            )


def ran_out(count: int, request: int) -> str:
    """What the model failure says, and the trace records, when `request` finds no reply."""
    return f"the script ran out: it holds {replies(count)}, and request {request} found none left"


def replies(count: int) -> str:
    return f"{count} repl{'y' if count == 1 else 'ies'}"


def played_back(
    reply: RecordedReply, request: ModelRequest, number: int
) -> Iterator[dict[str, Any]]:
    """A recorded reply as it was received; raises the model's recorded failure after it."""
    if reply.streamed != request.streaming:
        recorded, asked = ("streamed", "is not") if reply.streamed else ("not streamed", "is")
        raise ModelError(
            f"recorded reply {number} was {recorded}, and request {number} {asked}: the "
            "strategy must stream as the recording's did",
            kind="protocol",
        )
    yield from reply.chunks
    if reply.failure is not None:
        message, kind = reply.failure
        raise ModelError(message, kind=kind, said=reply.said)


def parse_script(text: str) -> list[Reply]:
    """A JSON list of replies, or JSONL; raises ValueError naming the bad line or item."""
    stripped = text.strip()
    if stripped.startswith("["):
        value = load_json(stripped, "the list")
        return [check_reply(item, f"item {i + 1}") for i, item in enumerate(value)]
    return [
        check_reply(load_json(line, f"line {number}"), f"line {number}")
        for number, line in enumerate(text.splitlines(), start=1)
        if line.strip()
    ]


def load_json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as error:  # also a number of 4,300 digits, which Python will not read
        raise ValueError(f"{where} is not JSON: {error}") from None
    except RecursionError:
        raise ValueError(f"{where} is nested too deeply") from None


MESSAGE_KEYS = ("role", "content", "tool_calls", "finish_reason")
CALL_KEYS = ("id", "type", "function")
FLAT_CALL_KEYS = ("id", "type", "name", "arguments")
"""A call may also be written flat, `{"name": ..., "arguments": ...}`, for convenience."""
FUNCTION_KEYS = ("name", "arguments")


def check_reply(value: Any, where: str) -> Reply:
    """`value` if the script format can play it exactly as written, else ValueError naming
    `where` and the key. Nothing is dropped or converted silently: a typo'd key or a number
    where text belongs would otherwise play a different reply than the one the script shows.
    What a model may get wrong (an empty name, broken arguments text, an odd finish_reason)
    is allowed: playing those is what scripts are for."""
    if isinstance(value, (str, RecordedReply)):
        return value
    if not isinstance(value, dict):
        raise ValueError(
            f"{where}: a reply must be a JSON string or object, got {json_type_in_words(value)}"
        )
    if problem := message_problem(value):
        raise ValueError(f"{where}: {problem}")
    return value


def message_problem(message: dict[str, Any]) -> str | None:
    if problem := unknown_key(message, MESSAGE_KEYS, ""):
        return problem
    if message.get("role", "assistant") != "assistant":
        return f'`role` must be "assistant", got {json.dumps(message["role"])}'
    for key in ("content", "finish_reason"):
        if message.get(key) is not None and not isinstance(message[key], str):
            return f"`{key}` must be a string or null, got {json_type_in_words(message[key])}"
    calls = message.get("tool_calls")
    if calls is None:
        return None
    if not isinstance(calls, list):
        return f"`tool_calls` must be a list of calls, got {json_type_in_words(calls)}"
    for index, call in enumerate(calls):
        if problem := call_problem(call, f"tool_calls[{index}]"):
            return problem
    return None


def call_problem(call: Any, key: str) -> str | None:
    if not isinstance(call, dict):
        return f"`{key}` must be an object (a call), got {json_type_in_words(call)}"
    if problem := envelope_problem(call, key):
        return problem
    if "function" in call:
        return function_problem(call["function"], f"{key}.function")
    return name_problem(call, key)  # a flat call: `name` and `arguments` beside the id


def envelope_problem(call: dict[str, Any], key: str) -> str | None:
    """The call's own keys: `function` or the flat `name`/`arguments` (not both), id, type."""
    flat = next((k for k in FUNCTION_KEYS if k in call), None)
    if "function" in call and flat:
        return (
            f"`{key}` gives `function` and `{flat}`: use `function` or `name`/`arguments`, not both"
        )
    if problem := unknown_key(call, CALL_KEYS if "function" in call else FLAT_CALL_KEYS, key):
        return problem
    if call.get("id") is not None and not isinstance(call["id"], str):
        return f"`{key}.id` must be a string, got {json_type_in_words(call['id'])}"
    if call.get("type", "function") != "function":
        return f'`{key}.type` must be "function", got {json.dumps(call["type"])}'
    return None


def function_problem(function: Any, where: str) -> str | None:
    if not isinstance(function, dict):
        return f"`{where}` must be an object, got {json_type_in_words(function)}"
    return unknown_key(function, FUNCTION_KEYS, where) or name_problem(function, where)


def name_problem(function: dict[str, Any], where: str) -> str | None:
    if "name" not in function:
        return f'`{where}.name` is missing (a string; "" plays a call without a name)'
    if not isinstance(function["name"], str):
        return f"`{where}.name` must be a string, got {json_type_in_words(function['name'])}"
    return None


def unknown_key(value: dict[str, Any], known: tuple[str, ...], where: str) -> str | None:
    for key in value:
        if key not in known:
            allowed = ", ".join(f"`{k}`" for k in known)
            path = f"{where}.{key}" if where else key
            return f"unknown key `{path}` (known: {allowed})"
    return None


def scripted_output(reply: str | dict[str, Any], number: int) -> AssistantOutput:
    if isinstance(reply, str):
        return AssistantOutput(reply)
    calls = tuple(
        wire_call(entry, f"call_scripted_{number}_{index}")
        for index, entry in enumerate(reply.get("tool_calls") or [])
    )
    # A script may force a finish_reason, e.g. "length" to play a reply cut by max_tokens.
    finish = reply.get("finish_reason") or ("tool_calls" if calls else "stop")
    return AssistantOutput(reply.get("content"), calls, finish)


def wire_call(entry: dict[str, Any], default_id: str) -> WireCall:
    """A checked call; `arguments` may be written as any JSON value for convenience, and only
    text is sent as it is (broken JSON included)."""
    function: dict[str, Any] = entry.get("function", entry)
    arguments = function.get("arguments", "")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return WireCall(entry.get("id") or default_id, function["name"], arguments)


def scripted_model(model: object) -> ScriptedModel | None:
    """The scripted model behind `model` (which may pace it), or None for any other."""
    inner = getattr(model, "inner", model)
    return inner if isinstance(inner, ScriptedModel) else None


def read_script(script: Path | None) -> tuple[Path, bytes | None]:
    """`--script FILE`, with its bytes when it is no regular file: a pipe (`<(...)`) cannot be
    read twice, and a device may never end. A file is read as it is parsed (a trace line by
    line, in bounded memory). No script, or one that cannot be read, is a usage error."""
    if script is None:
        raise ModelConfigError(
            "--model scripted needs --script FILE (a JSON list or JSONL of replies, or a trace)"
        )
    try:
        if stat.S_ISREG(script.stat().st_mode):
            return script, None
        return script, read_bounded(script, SCRIPT_LIMIT)
    except OSError as error:
        raise unreadable(script, error) from None


def unreadable(script: Path, error: OSError) -> ModelConfigError:
    """A script the system would not read (missing, a folder, not allowed), whether it failed
    when first looked at or while its replies were read."""
    return ModelConfigError(f"cannot read script {script}: {error.strerror or error}")


def load_script(script: Path, data: bytes | None = None) -> ScriptedModel:
    """The scripted model for `--script FILE` of replies (`data`: its bytes, read already); a
    script that cannot be used is a usage error."""
    try:
        model = ScriptedModel.from_file(script) if data is None else ScriptedModel.from_bytes(data)
    except OSError as error:
        raise unreadable(script, error) from None
    except ValueError as error:
        raise ModelConfigError(f"bad script {script}: {error}") from None
    if not model.replies:
        raise ModelConfigError(f"script {script} holds no replies")
    return model
