"""A tool-use loop, the stream strategy: the reply is parsed as it streams; calls run at once."""

import ast
import json
import operator as op
import os
import sys
from collections.abc import Iterable, Iterator
from typing import Any

import httpx

URL = os.getenv("OPENAI_BASE_URL", "http://127.0.0.1:8765/v1") + "/chat/completions"
MODEL = os.getenv("OPENAI_MODEL", "toolcall-offline")
HTTP = httpx.Client(headers={"Authorization": f"Bearer {os.getenv('OPENAI_API_KEY')}"}, timeout=60)
OPEN, CLOSE = "<tool_call>", "</tool_call>"
SYSTEM = """Answer in the user's language. Where a tool helps, call it, each call on its own line:
<tool_call>{"name": "calculate", "arguments": {"expression": "1+1"}}</tool_call>
# Tools
## calculate
Evaluate an arithmetic expression (计算): + - * / and parentheses.
Parameters: - expression: string (required) — e.g. "12*5+3"
## get_weather
Get today's weather (天气) for a city: condition and temperature in °C and °F.
Parameters: - city: string (required) — e.g. Beijing, 北京"""
RESULT = '<tool_result id="{}" name="{}">\n{}\n</tool_result>'
OPS: dict[type, Any] = {ast.Add: op.add, ast.Sub: op.sub, ast.Mult: op.mul, ast.Div: op.truediv}
WEATHER = {"beijing": ("Sunny", 8), "shanghai": ("Cloudy", 15), "paris": ("Rain", 11)}
WEATHER |= {"北京": ("晴", 8), "上海": ("多云", 15), "巴黎": ("小雨", 11)}  # asked in Chinese


def calculate(expression: str | ast.AST) -> Any:  # reads the syntax tree: never eval
    node = ast.parse(expression, mode="eval").body if isinstance(expression, str) else expression
    if isinstance(node, ast.BinOp) and type(node.op) in OPS:
        return OPS[type(node.op)](calculate(node.left), calculate(node.right))
    if isinstance(value := ast.literal_eval(node), (int, float)):  # a number, or -number
        return value
    raise ValueError(f"not arithmetic: {ast.unparse(node)}")


def get_weather(city: str) -> dict[str, Any]:  # described to the model in SYSTEM
    sky, c = WEATHER[city.strip().lower()]  # an unknown city: KeyError, fed back
    return {"city": city, "day": "today", "condition": sky, "temp_c": c, "temp_f": c * 1.8 + 32}


def parse(pieces: Iterable[str]) -> Iterator[tuple[bool, str]]:  # the state machine
    pending, in_call = "", False
    for piece in pieces:
        pending += piece
        while (at := pending.find(tag := CLOSE if in_call else OPEN)) >= 0:
            yield in_call, pending[:at]
            pending, in_call = pending[at + len(tag) :], not in_call
        if not in_call and len(pending) >= len(OPEN):  # hold back what may begin a split tag
            yield False, pending[: 1 - len(OPEN)]
            pending = pending[1 - len(OPEN) :]
    yield in_call, pending  # the end: text held back, or a call never closed


def agent_loop(question: str) -> None:
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]
    for _ in range(5):  # a model that never stops calling must not loop forever
        reply, results = "", list[str]()
        body = {"model": MODEL, "messages": messages, "stream": True}
        with HTTP.stream("POST", URL, json=body) as response:
            if response.is_error:
                sys.exit(f"HTTP {response.status_code}: {response.read().decode()}")
            events = (json.loads(s[6:]) for s in response.iter_lines() if s.startswith("data: {"))
            pieces = (c["delta"].get("content") or "" for e in events for c in e["choices"])
            for is_call, text in parse(pieces):
                reply += OPEN + text + CLOSE if is_call else text
                print("" if is_call else text, end="", flush=True)
                if is_call:  # a whole call: run it now, while the reply still streams
                    name = "?"  # until the call is read; then its errors go back under its name
                    try:
                        name = str((call := json.loads(text))["name"])
                        result = json.dumps(TOOLS[name](**call["arguments"]), ensure_ascii=False)
                    except Exception as error:  # fed back, so the model can fix its call
                        result = f"error: {type(error).__name__}: {error}"
                    results.append(RESULT.format(len(results), name, result))
        messages.append({"role": "assistant", "content": reply})
        if not results:  # no call: the reply, shown as it came, was the answer
            return print()
        messages.append({"role": "user", "content": "\n".join(results)})
    sys.exit("no answer after 5 iterations")


TOOLS: dict[str, Any] = {"calculate": calculate, "get_weather": get_weather}
if __name__ == "__main__":
    agent_loop(" ".join(sys.argv[1:]) or "What's 12*5+3?")
