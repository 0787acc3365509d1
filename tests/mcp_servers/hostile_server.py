"""An MCP server that lists whatever tools it is told to and answers calls as told: no SDK, only
the newline-delimited JSON-RPC a stdio server speaks, so it can say what no SDK would let it.

    python hostile_server.py PLAN.json

PLAN.json holds:
    tools       the `tools/list` entries, as given (their schemas may be anything)
    results     tool name -> {"text": str} | {"repeat": str, "times": int} (a long text)
    noise       lines written to stdout before every answer (not JSON-RPC)

Standard library only: it starts in milliseconds, and nothing in it checks what it is told.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def answer(plan: dict[str, Any], message: dict[str, Any]) -> dict[str, Any] | None:
    method = message.get("method")
    if "id" not in message:
        return None  # a notification (`notifications/initialized`)
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": plan.get("tools", [])}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": text_of(plan, message)}], "isError": False}
    else:
        result = {}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def text_of(plan: dict[str, Any], message: dict[str, Any]) -> str:
    told = plan.get("results", {}).get(message["params"]["name"], {"text": "done"})
    if "repeat" in told:
        return str(told["repeat"]) * int(told["times"])
    return str(told["text"])


def main(argv: list[str]) -> None:
    with open(argv[0], encoding="utf-8") as file:
        plan = json.load(file)
    for line in sys.stdin:
        reply = answer(plan, json.loads(line))
        if reply is None:
            continue
        for noise in plan.get("noise", []):
            sys.stdout.write(noise + "\n")
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
