"""What a chat-completions request must hold before the model reads it. Each problem is refused
as OpenAI refuses it: an HTTP status and an `error` object naming the parameter, so a learner's
loop meets here the same 400 it would meet there (a tool result without its call, above all)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

ROLES = ("system", "developer", "user", "assistant", "tool")
TOOL_CHOICES = ("none", "auto", "required")
RESPONSE_FORMATS = ("text", "json_object", "json_schema")
_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""OpenAI's rule for a function name."""


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


def read_body(raw: bytes) -> dict[str, Any]:
    """The request body as a JSON object."""
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise bad("could not parse the JSON body of the request", code=None) from None
    if not isinstance(body, dict):
        raise bad("the request body must be a JSON object", code=None)
    return body


def check_request(body: dict[str, Any]) -> None:
    """Refuse a body OpenAI would refuse, naming the first parameter at fault."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise bad("you must provide a model parameter", "model", "missing_required_parameter")
    check_messages(body.get("messages"))
    names = check_tools(body.get("tools"))
    check_tool_choice(body, names)
    check_response_format(body.get("response_format"))
    check_stream(body)
    if body.get("n") not in (None, 1):
        raise bad("this server writes one choice: 'n' must be 1", "n")


def check_messages(messages: Any) -> None:
    if messages is None:
        raise bad(
            "Missing required parameter: 'messages'.", "messages", "missing_required_parameter"
        )
    if not isinstance(messages, list) or not messages:
        raise bad("'messages' must be a non-empty array of message objects.", "messages")
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
    names: list[str] = []
    for index, tool in enumerate(tools):
        where = f"tools[{index}]"
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(tool, dict) or tool.get("type") != "function":
            raise bad(f"'{where}.type' must be 'function'.", f"{where}.type")
        if not isinstance(function, dict):
            raise bad(f"'{where}.function' must be an object.", f"{where}.function")
        name = function.get("name")
        if not isinstance(name, str) or not _TOOL_NAME.fullmatch(name):
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
