"""What a chat-completions request must hold before the model reads it. Each problem is refused
as OpenAI refuses it: an HTTP status and an `error` object naming the parameter, so a learner's
loop meets here the same 400 it would meet there (a tool result without its call, above all)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolcall_cli.strictjson import json_type
from toolcall_cli.tools.schema import TOOL_NAME
from toolcall_cli.wire.tokens import request_tokens

ROLES = ("system", "developer", "user", "assistant", "tool")
TOOL_CHOICES = ("none", "auto", "required")
RESPONSE_FORMATS = ("text", "json_object", "json_schema")
MAX_MESSAGES = 2048
MAX_TOOLS = 128
"""The most messages and tools one request may hold, as OpenAI allows."""


class Refused(Exception):
    """A request the server will not answer: its HTTP status and OpenAI's error fields."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        error_type: str = "invalid_request_error",
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code
        self.error_type = error_type
        self.headers = headers or {}
        """HTTP headers the refusal needs (`Allow` with a 405)."""

    def payload(self) -> dict[str, Any]:
        """The body OpenAI sends with an error."""
        fields = {"message": self.message, "type": self.error_type}
        return {"error": {**fields, "param": self.param, "code": self.code}}


def bad(message: str, param: str | None = None, code: str | None = "invalid_value") -> Refused:
    return Refused(400, message, param=param, code=code)


def check_request(body: dict[str, Any]) -> None:
    """Refuse a body OpenAI would refuse, naming the first parameter at fault; and one longer
    than the model's context window, as any model's server does."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise bad("you must provide a model parameter", "model", "missing_required_parameter")
    check_messages(body.get("messages"))
    names = check_tools(body.get("tools"))
    check_tool_choice(body, names)
    check_response_format(body.get("response_format"))
    check_stream(body)
    check_sampling(body)
    if body.get("n") not in (None, 1):
        raise bad("this server writes one choice: 'n' must be 1", "n")
    check_window(body)


CONTEXT_TOKENS = 32_768
"""The served model's context window, in tokens as toolcall estimates them (wire.tokens): what
bounds the work one request can ask of the offline model."""


def check_window(body: dict[str, Any]) -> None:
    tokens = request_tokens(body)
    if tokens > CONTEXT_TOKENS:
        raise bad(
            f"This model's maximum context length is {CONTEXT_TOKENS} tokens. However, your "
            f"messages resulted in {tokens} tokens. Please reduce the length of the messages.",
            "messages",
            "context_length_exceeded",
        )


# What OpenAI accepts of each sampling parameter: a number within a range, a whole number within
# a range, true or false, text. `None` (JSON null) is accepted for each, as OpenAI accepts it.
_DECIMALS = {
    "temperature": (0.0, 2.0),
    "top_p": (0.0, 1.0),
    "presence_penalty": (-2.0, 2.0),
    "frequency_penalty": (-2.0, 2.0),
}
_INTEGERS: dict[str, tuple[int, int | None]] = {
    "max_tokens": (1, None),
    "max_completion_tokens": (1, None),
    "n": (1, 128),
    "top_logprobs": (0, 20),
    "seed": (-(2**63), 2**63 - 1),
}
_TYPED = {"logprobs": bool, "parallel_tool_calls": bool, "store": bool, "user": str}
MAX_STOP = 4
"""Stop sequences OpenAI takes at most."""


def check_sampling(body: dict[str, Any]) -> None:
    """Each sampling parameter is of its type and within its range, as OpenAI checks them."""
    for name, (low, high) in _DECIMALS.items():
        if body.get(name) is not None:
            check_range(name, body[name], low, high, "decimal")
    for name, (low_int, high_int) in _INTEGERS.items():
        if body.get(name) is not None:
            check_range(name, body[name], low_int, high_int, "integer")
    for name, kind in _TYPED.items():
        if body.get(name) is not None and not isinstance(body[name], kind):
            raise invalid_type(name, "a boolean" if kind is bool else "a string", body[name])
    check_stop(body.get("stop"))


def check_range(name: str, value: Any, low: float, high: float | None, kind: str) -> None:
    """`value` is a number of its `kind` ("decimal" or "integer") within [low, high]."""
    integer = kind == "integer"
    if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)):
        raise invalid_type(name, "an integer" if integer else "a decimal", value)
    if value < low:
        raise bad(
            f"Invalid '{name}': {kind} below minimum value. Expected a value >= {number(low)}, "
            f"but got {number(value)} instead.",
            name,
            f"{kind}_below_min_value",
        )
    if high is not None and value > high:
        raise bad(
            f"Invalid '{name}': {kind} above maximum value. Expected a value <= {number(high)}, "
            f"but got {number(value)} instead.",
            name,
            f"{kind}_above_max_value",
        )


def number(value: float) -> str:
    """2.0 as 2, 0.7 as 0.7, a whole number as all its digits."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def check_stop(stop: Any) -> None:
    if stop is None or isinstance(stop, str):
        return
    if not isinstance(stop, list) or not all(isinstance(s, str) for s in stop):
        raise invalid_type("stop", "a string or an array of strings", stop)
    if len(stop) > MAX_STOP:
        raise too_long("stop", MAX_STOP, len(stop))


def invalid_type(name: str, expected: str, value: Any) -> Refused:
    return bad(
        f"Invalid type for '{name}': expected {expected}, but got {openai_type(value)} instead.",
        name,
        "invalid_type",
    )


# OpenAI's errors name a value's type so: "a decimal" for a number with a fraction.
_OPENAI_WORDS = {
    "integer": "an integer",
    "number": "a decimal",
    "array": "an array",
    "object": "an object",
}


def openai_type(value: Any) -> str:
    """What a value is, as OpenAI's errors name it ("an integer", "a decimal", "an array")."""
    name = json_type(value) or "object"
    return "null" if name == "null" else _OPENAI_WORDS.get(name, f"a {name}")


def too_long(name: str, most: int, length: int) -> Refused:
    return bad(
        f"Invalid '{name}': array too long. Expected an array with maximum length {most}, but "
        f"got an array with length {length} instead.",
        name,
        "array_above_max_length",
    )


def check_messages(messages: Any) -> None:
    if messages is None:
        raise bad(
            "Missing required parameter: 'messages'.", "messages", "missing_required_parameter"
        )
    if not isinstance(messages, list) or not messages:
        raise bad("'messages' must be a non-empty array of message objects.", "messages")
    if len(messages) > MAX_MESSAGES:
        raise too_long("messages", MAX_MESSAGES, len(messages))
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        if not isinstance(message, dict):
            raise bad(f"'{where}' must be an object.", where)
        if message.get("role") not in ROLES:
            allowed = ", ".join(repr(r) for r in ROLES)
            raise bad(
                f"Invalid value: {message.get('role')!r}. Supported roles: {allowed}.",
                f"{where}.role",
            )
        check_content(message, where)
        if message["role"] == "assistant" and message.get("tool_calls") is not None:
            check_tool_calls(message["tool_calls"], f"{where}.tool_calls")
    check_pairing(messages)


def check_content(message: dict[str, Any], where: str) -> None:
    content = message.get("content")
    # An assistant turn that only calls tools may carry no content at all.
    may_be_empty = message["role"] == "assistant" and message.get("tool_calls")
    if content is None and not may_be_empty:
        raise bad(
            f"'{where}.content' is missing.", f"{where}.content", "missing_required_parameter"
        )
    if content is not None and not isinstance(content, (str, list)):
        raise bad(f"'{where}.content' must be a string or an array of parts.", f"{where}.content")


def check_tool_calls(calls: Any, where: str) -> None:
    if not isinstance(calls, list):
        raise bad(f"'{where}' must be an array.", where)
    for index, call in enumerate(calls):
        at = f"{where}[{index}]"
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(call, dict) or not isinstance(call.get("id"), str):
            raise bad(f"'{at}.id' must be a string.", f"{at}.id")
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise bad(f"'{at}.function.name' must be a string.", f"{at}.function.name")
        if not isinstance(function.get("arguments"), str):
            # The classic slip: arguments sent back as an object instead of the JSON text.
            message = f"'{at}.function.arguments' must be a string (the JSON text the model sent)."
            raise bad(message, f"{at}.function.arguments")


def check_pairing(messages: Sequence[dict[str, Any]]) -> None:
    """Every call an assistant message makes is answered by a `tool` message with its id, right
    after it; and a `tool` message answers such a call. OpenAI refuses either slip."""
    waiting: list[str] = []
    for index, message in enumerate(messages):
        if message["role"] == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str):
                where = f"messages[{index}].tool_call_id"
                raise bad(
                    f"Missing required parameter: '{where}'.", where, "missing_required_parameter"
                )
            if call_id not in waiting:
                raise bad(
                    f"Invalid parameter: messages with role 'tool' must be a response to a "
                    f"preceding message with 'tool_calls' (no call has the id {call_id!r}).",
                    f"messages[{index}].tool_call_id",
                )
            waiting.remove(call_id)
            continue
        if waiting:
            raise unanswered(waiting, index)
        if message["role"] == "assistant":
            waiting = [c["id"] for c in message.get("tool_calls") or []]
    if waiting:
        raise unanswered(waiting, len(messages))


def unanswered(call_ids: Sequence[str], index: int) -> Refused:
    return bad(
        "An assistant message with 'tool_calls' must be followed by tool messages responding to "
        "each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        + ", ".join(call_ids),
        f"messages[{index}]",
        None,
    )


def check_tools(tools: Any) -> list[str]:
    """The names of the tools offered, once each is a well-formed function."""
    if tools is None:
        return []
    if not isinstance(tools, list):
        raise bad("'tools' must be an array.", "tools")
    if len(tools) > MAX_TOOLS:
        raise too_long("tools", MAX_TOOLS, len(tools))
    names: list[str] = []
    for index, tool in enumerate(tools):
        where = f"tools[{index}]"
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(tool, dict) or tool.get("type") != "function":
            raise bad(f"'{where}.type' must be 'function'.", f"{where}.type")
        if not isinstance(function, dict):
            raise bad(f"'{where}.function' must be an object.", f"{where}.function")
        name = function.get("name")
        if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
            raise bad(
                f"'{where}.function.name' must match ^[a-zA-Z0-9_-]{{1,64}}$, got {name!r}.",
                f"{where}.function.name",
            )
        if not isinstance(function.get("parameters", {}), dict):
            raise bad(f"'{where}.function.parameters' must be a JSON Schema object.", where)
        names.append(name)
    return names


def check_tool_choice(body: dict[str, Any], names: Sequence[str]) -> None:
    choice = body.get("tool_choice")
    if choice is None:
        return
    if not names:
        message = "Invalid value for 'tool_choice': it is only allowed when 'tools' are specified."
        raise bad(message, "tool_choice")
    if choice in TOOL_CHOICES:
        return
    function = choice.get("function") if isinstance(choice, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    if not isinstance(choice, dict) or choice.get("type") != "function" or name is None:
        raise bad(
            "'tool_choice' must be 'none', 'auto', 'required' or "
            '{"type": "function", "function": {"name": ...}}.',
            "tool_choice",
        )
    if name not in names:
        raise bad(f"'tool_choice' names {name!r}, which is not among the tools.", "tool_choice")


def check_response_format(response_format: Any) -> None:
    if response_format is None:
        return
    kind = response_format.get("type") if isinstance(response_format, dict) else None
    if kind not in RESPONSE_FORMATS:
        allowed = ", ".join(repr(k) for k in RESPONSE_FORMATS)
        raise bad(f"'response_format.type' must be one of {allowed}.", "response_format.type")
    if kind == "json_schema":
        schema = response_format.get("json_schema")
        if not isinstance(schema, dict) or not isinstance(schema.get("name"), str):
            message = "'response_format.json_schema' must be an object with a 'name'."
            raise bad(message, "response_format.json_schema")


def check_stream(body: dict[str, Any]) -> None:
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise bad("'stream' must be true or false.", "stream")
    options = body.get("stream_options")
    if options is None:
        return
    if not stream:
        message = "The 'stream_options' parameter is only allowed when 'stream' is enabled."
        raise bad(message, "stream_options")
    if not isinstance(options, dict):
        raise bad("'stream_options' must be an object.", "stream_options")
