"""What every peer runner shares: the same tools, the same job, the same measurement.

Runs in the bench's own venv (bench/.venv-peers), never in toolcall's: toolcall is not importable
there, so a stand-in `toolcall_cli.tool` marks the tools.d functions, which each runner then
wraps as its framework expects, from one description per tool (name, description and JSON
Schema parameters, read from the function's signature and docstring as toolcall reads them).

Every framework here talks to the server through the `openai` package over httpx, so each
runner hands its framework an httpx client whose transport records every chat request and
reply: the model calls, their tokens and the sampling actually sent are counted the same way
for every peer, whatever the framework reports of itself.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import re
import sys
import time
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

REPLY_CHARS = 400
"""Each reply and result is kept to this many characters in the record."""


def _install_tool_stand_in() -> list[Callable[..., Any]]:
    """A `toolcall_cli` module whose `tool` marks functions like the real one does."""
    marked: list[Callable[..., Any]] = []

    def tool(func: Any = None, /, **_options: Any) -> Any:
        def mark(target: Callable[..., Any]) -> Callable[..., Any]:
            marked.append(target)
            return target

        return mark(func) if func is not None else mark

    module = types.ModuleType("toolcall_cli")
    module.tool = tool  # type: ignore[attr-defined]
    sys.modules["toolcall_cli"] = module
    return marked


def load_functions(dirs: list[str]) -> list[Callable[..., Any]]:
    marked = _install_tool_stand_in()
    for number, directory in enumerate(dirs):
        for path in sorted(Path(directory).glob("*.py")):
            if path.name.startswith("_"):
                continue
            spec = importlib.util.spec_from_file_location(f"bench_tools_{number}_{path.stem}", path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
    return marked


def arg_docs(doc: str) -> dict[str, str]:
    """The `Args:` section of a Google-style docstring, name -> description."""
    found: dict[str, str] = {}
    section = doc.split("Args:", 1)[1] if "Args:" in doc else ""
    for match in re.finditer(r"^\s+(\w+):\s*(.+?)(?=^\s+\w+:|\Z)", section, re.M | re.S):
        found[match.group(1)] = " ".join(match.group(2).split())
    return found


def json_type(annotation: Any) -> tuple[str, list[str] | None]:
    if typing.get_origin(annotation) is typing.Literal:
        return "string", [str(a) for a in typing.get_args(annotation)]
    return {str: "string", float: "number", int: "integer", bool: "boolean"}.get(
        annotation, "string"
    ), None


@dataclass(frozen=True)
class ToolSpec:
    """One tool as every framework is given it."""

    name: str
    description: str
    parameters: dict[str, Any]
    """JSON Schema of the arguments (type object, properties, required)."""
    function: Callable[..., Any]


def tool_specs(dirs: list[str], given: list[dict[str, Any]] | None = None) -> list[ToolSpec]:
    """The tools, described as toolcall describes them to a model when `given` (the job's
    "tools": name, description, parameters from toolcall's own registry); otherwise read here
    from each function's signature and docstring the same way."""
    functions = {func.__name__: func for func in load_functions(dirs)}
    if given:
        return [
            ToolSpec(t["name"], t["description"], t["parameters"], functions[t["name"]])
            for t in given
        ]
    specs = []
    for func in functions.values():
        doc = inspect.getdoc(func) or func.__name__
        hints = typing.get_type_hints(func)
        docs = arg_docs(doc)
        properties: dict[str, Any] = {}
        required: list[str] = []
        for name, param in inspect.signature(func).parameters.items():
            kind, enum = json_type(hints.get(name, Any))
            prop: dict[str, Any] = {"type": kind, "description": docs.get(name, name)}
            if enum:
                prop["enum"] = enum
            if param.default is inspect.Parameter.empty:
                required.append(name)
            else:
                prop["default"] = param.default
            properties[name] = prop
        parameters = {"type": "object", "properties": properties, "required": required}
        description = doc.split("Args:", 1)[0].strip()
        specs.append(ToolSpec(func.__name__, description, parameters, func))
    return specs


@dataclass
class Log:
    """What happened in one run: tool calls and their results, model requests and replies."""

    called: list[str] = field(default_factory=list)
    results: list[str] = field(default_factory=list)
    requests: int = 0
    tokens: int = 0
    replies: list[str] = field(default_factory=list)
    sent: dict[str, Any] = field(default_factory=dict)
    """The sampling fields of the first chat request, as they went to the server."""

    def run_tool(self, spec: ToolSpec, arguments: dict[str, Any]) -> str:
        """Run a tool; an error goes back to the model as text, as toolcall feeds it back."""
        self.called.append(spec.name)
        args = {k: v for k, v in arguments.items() if v is not None}
        try:
            text = json.dumps(spec.function(**args), ensure_ascii=False)
        except Exception as error:  # the model's call was wrong: it reads why
            text = f"Error: {error}"
        self.results.append(text[:REPLY_CHARS])
        return text

    def saw(self, request: httpx.Request, body: bytes) -> None:
        if not request.url.path.endswith("/chat/completions"):
            return
        self.requests += 1
        if not self.sent:
            try:
                sent = json.loads(request.content or b"{}")
            except ValueError:
                sent = {}
            keys = ("temperature", "seed", "max_tokens", "max_completion_tokens", "tool_choice")
            self.sent = {k: sent[k] for k in keys if k in sent}
            self.sent["tools"] = len(sent.get("tools") or [])
        try:
            reply = json.loads(body)
        except ValueError:
            self.replies.append(f"(HTTP body not JSON: {body[:200]!r})")
            return
        self.tokens += int((reply.get("usage") or {}).get("total_tokens") or 0)
        choice = (reply.get("choices") or [{}])[0].get("message") or {}
        parts = [str(choice.get("content") or "")]
        for call in choice.get("tool_calls") or []:
            function = call.get("function") or {}
            parts.append(f"{function.get('name')}({function.get('arguments')})")
        if "error" in reply:
            parts.append(f"error: {json.dumps(reply['error'], ensure_ascii=False)}")
        self.replies.append(" ".join(p for p in parts if p)[:REPLY_CHARS])


def _replayed(response: httpx.Response, body: bytes, request: httpx.Request) -> httpx.Response:
    headers = [
        (k, v)
        for k, v in response.headers.multi_items()
        if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")
    ]
    return httpx.Response(response.status_code, headers=headers, content=body, request=request)


class RecordingTransport(httpx.HTTPTransport):
    def __init__(self, log: Log) -> None:
        super().__init__()
        self.log = log

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        body = response.read()
        self.log.saw(request, body)
        return _replayed(response, body, request)


class AsyncRecordingTransport(httpx.AsyncHTTPTransport):
    def __init__(self, log: Log) -> None:
        super().__init__()
        self.log = log

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await super().handle_async_request(request)
        body = await response.aread()
        self.log.saw(request, body)
        return _replayed(response, body, request)


TIMEOUT = httpx.Timeout(600.0, connect=10.0)


def http_client(log: Log) -> httpx.Client:
    return httpx.Client(transport=RecordingTransport(log), timeout=TIMEOUT)


def async_http_client(log: Log) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=AsyncRecordingTransport(log), timeout=TIMEOUT)


def read_job() -> dict[str, Any]:
    job: dict[str, Any] = json.load(sys.stdin)
    return job


def finish(log: Log, started: float, answer: str | None, error: str = "", state: str = "") -> None:
    """Print the one JSON result line realmodel_eval.py reads."""
    out = {
        "answer": answer,
        "error": error[:500],
        "state": state,
        "steps": log.requests,
        "tool_calls": len(log.called),
        "called": log.called,
        "results": log.results,
        "tokens": log.tokens,
        "replies": log.replies,
        "sent": log.sent,
        "wall": time.monotonic() - started,
    }
    print(json.dumps(out, ensure_ascii=False, default=str))


def failure(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"
