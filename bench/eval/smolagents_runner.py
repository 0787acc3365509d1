"""Answer one question with smolagents' ToolCallingAgent: the peer in bench/realmodel_eval.py.

Runs in the bench's own venv (bench/.venv-peers, with smolagents and openai), never in
toolcall's: toolcall is not importable here, so a stand-in `toolcall_cli.tool` marks the same
tools.d functions, which are then wrapped as smolagents tools. Reads one JSON job from stdin,
prints one JSON result line on stdout.
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
from pathlib import Path
from typing import Any


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


def _load_functions(dirs: list[str]) -> list[Callable[..., Any]]:
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


def _arg_docs(doc: str) -> dict[str, str]:
    """The `Args:` section of a Google-style docstring, name -> description."""
    found: dict[str, str] = {}
    section = doc.split("Args:", 1)[1] if "Args:" in doc else ""
    for match in re.finditer(r"^\s+(\w+):\s*(.+?)(?=^\s+\w+:|\Z)", section, re.M | re.S):
        found[match.group(1)] = " ".join(match.group(2).split())
    return found


def _json_type(annotation: Any) -> tuple[str, list[str] | None]:
    if typing.get_origin(annotation) is typing.Literal:
        return "string", [str(a) for a in typing.get_args(annotation)]
    return {str: "string", float: "number", int: "integer", bool: "boolean"}.get(
        annotation, "any"
    ), None


def _as_smolagents_tool(func: Callable[..., Any]) -> Any:
    from smolagents import Tool

    doc = inspect.getdoc(func) or func.__name__
    hints = typing.get_type_hints(func)
    params = inspect.signature(func).parameters
    docs = _arg_docs(doc)
    inputs: dict[str, dict[str, Any]] = {}
    for name, param in params.items():
        kind, enum = _json_type(hints.get(name, Any))
        spec: dict[str, Any] = {"type": kind, "description": docs.get(name, name)}
        if enum:
            spec["enum"] = enum
        if param.default is not inspect.Parameter.empty:
            spec["nullable"] = True
        inputs[name] = spec

    def forward(self: Any, **kwargs: Any) -> str:
        args = {k: v for k, v in kwargs.items() if v is not None}
        return json.dumps(func(**args), ensure_ascii=False)

    cls = type(
        f"{func.__name__}_tool",
        (Tool,),
        {
            "name": func.__name__,
            "description": doc.split("Args:", 1)[0].strip(),
            "inputs": inputs,
            "output_type": "string",
            "skip_forward_signature_validation": True,
            "forward": forward,
        },
    )
    return cls()


def _tokens(result: Any) -> int | None:
    usage = getattr(result, "token_usage", None)
    if usage is None:
        return None
    total = getattr(usage, "total_tokens", None)
    if total is None:
        total = (getattr(usage, "input_tokens", 0) or 0) + (getattr(usage, "output_tokens", 0) or 0)
    return int(total)


def _reply_text(step: Any) -> str:
    """What the model said in one step: its content, then its calls as name(arguments)."""
    message = getattr(step, "model_output_message", None)
    if message is None:
        return str(getattr(step, "model_output", "") or "")
    parts = [str(getattr(message, "content", "") or "")]
    for call in getattr(message, "tool_calls", None) or []:
        function = getattr(call, "function", None)
        name = getattr(function, "name", "?")
        arguments = getattr(function, "arguments", "")
        parts.append(f"{name}({json.dumps(arguments, ensure_ascii=False, default=str)})")
    return " ".join(p for p in parts if p)


def _step_summaries(steps: list[Any]) -> tuple[int, int, list[str]]:
    """(action steps, tool calls, each step's model output cut to 400 chars)."""
    count, calls, replies = 0, 0, []
    for step in steps:
        if type(step).__name__ != "ActionStep":
            continue
        count += 1
        calls += len(getattr(step, "tool_calls", None) or [])
        replies.append(_reply_text(step)[:400])
    return count, calls, replies


def main() -> None:
    job = json.load(sys.stdin)
    from smolagents import OpenAIServerModel, ToolCallingAgent

    tools = [_as_smolagents_tool(f) for f in _load_functions(job["tool_dirs"])]
    model = OpenAIServerModel(
        model_id=job["model"], api_base=job["base_url"], api_key="none", **job.get("sampling", {})
    )
    agent = ToolCallingAgent(
        tools=tools, model=model, max_steps=job["max_steps"], verbosity_level=0
    )
    started = time.monotonic()
    out: dict[str, Any] = {}
    try:
        result = agent.run(job["question"], return_full_result=True)
        out["answer"] = "" if result.output is None else str(result.output)
        out["state"] = str(getattr(result, "state", ""))
        out["tokens"] = _tokens(result)
        steps = list(agent.memory.steps)
    except Exception as error:  # the peer failed: counted as no answer, with its reason
        out["error"] = f"{type(error).__name__}: {error}"[:500]
        steps = list(agent.memory.steps)
    out["steps"], out["tool_calls"], out["replies"] = _step_summaries(steps)
    out["wall"] = time.monotonic() - started
    print(json.dumps(out, ensure_ascii=False, default=str))


if __name__ == "__main__":
    main()
