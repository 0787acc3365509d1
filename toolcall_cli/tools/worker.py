"""The worker process of an isolated tool call (see isolated.py): reads the call as JSON on stdin,
runs the tool, and writes {"failure", "text"} as JSON to the file descriptor it was given.

Run as `python -m toolcall_cli.tools.worker FD`; never imported by toolcall itself.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def main() -> None:
    answer_fd = int(sys.argv[1])
    request = json.loads(sys.stdin.read())
    sys.path[:] = [str(p) for p in request.get("path", sys.path)]
    limit_memory(int(request.get("memory_limit", 0)))
    failure, text = run(request["target"], request["arguments"])
    with os.fdopen(answer_fd, "w", encoding="utf-8") as answers:
        json.dump({"failure": failure, "text": text}, answers, ensure_ascii=False)


def run(target: list[str], arguments: dict[str, Any]) -> tuple[bool, str]:
    from toolcall_cli.tools.executor import exception_text, result_text, unserialisable_text

    try:
        value = function(target)(**arguments)
    except BaseException as error:  # even SystemExit: it is the tool's failure, reported
        return True, exception_text(error)
    try:
        return False, result_text(value)
    except BaseException as error:
        return True, unserialisable_text(error)


def function(target: list[str]) -> Callable[..., Any]:
    kind, where, name = target
    if kind == "file":
        from toolcall_cli.tools.loader import import_plugin

        # fresh: the file as it is now, which chat's hot reload may have just loaded anew.
        found: Callable[..., Any] = getattr(import_plugin(Path(where), fresh=True), name)
        return found
    value: Any = importlib.import_module(where)
    for part in name.split("."):
        value = getattr(value, part)
    result: Callable[..., Any] = value
    return result


def limit_memory(limit: int) -> None:
    if limit <= 0:
        return
    try:
        import resource
    except ImportError:  # not on this platform: the timeout still bounds the call
        return
    try:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        wanted = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (wanted, hard))
    except (ValueError, OSError):
        pass


if __name__ == "__main__":
    main()
