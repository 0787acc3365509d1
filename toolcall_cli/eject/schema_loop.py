"""A tool-use loop, the schema strategy: tools sent as JSON Schema, calls read from `tool_calls`."""

import ast
import inspect
import json
import operator as op
import os
import sys
from typing import Any

import httpx

URL = os.getenv("OPENAI_BASE_URL", "http://127.0.0.1:8765/v1") + "/chat/completions"
MODEL = os.getenv("OPENAI_MODEL", "toolcall-offline")
HTTP = httpx.Client(headers={"Authorization": f"Bearer {os.getenv('OPENAI_API_KEY')}"}, timeout=60)
OPS: dict[type, Any] = {ast.Add: op.add, ast.Sub: op.sub, ast.Mult: op.mul, ast.Div: op.truediv}
STRING = {"type": "string"}
WEATHER = {"beijing": ("Sunny", 8), "shanghai": ("Cloudy", 15), "paris": ("Rain", 11)}
WEATHER |= {"北京": ("晴", 8), "上海": ("多云", 15), "巴黎": ("小雨", 11)}  # asked in Chinese


def calculate(expression: str | ast.AST) -> Any:
    """Evaluate arithmetic (计算), e.g. 12*5+3; read from its syntax tree, never eval-ed."""
    node = ast.parse(expression, mode="eval").body if isinstance(expression, str) else expression
    if isinstance(node, ast.BinOp) and type(node.op) in OPS:
        return OPS[type(node.op)](calculate(node.left), calculate(node.right))
    if isinstance(value := ast.literal_eval(node), (int, float)):  # a number, or -number
        return value
    raise ValueError(f"not arithmetic: {ast.unparse(node)}")


def get_weather(city: str) -> dict[str, Any]:
    """Get today's weather (天气) in a city, e.g. Paris or 北京: condition and temperature."""
    sky, c = WEATHER[city.strip().lower()]  # an unknown city: KeyError, fed back
    return {"city": city, "day": "today", "condition": sky, "temp_c": c, "temp_f": c * 1.8 + 32}


def spec(tool: Any) -> dict[str, Any]:  # from its signature: every parameter a required string
    params = list(inspect.signature(tool).parameters)
    schema = {"type": "object", "properties": {p: STRING for p in params}, "required": params}
    about = {"name": tool.__name__, "description": tool.__doc__, "parameters": schema}
    return {"type": "function", "function": about}


TOOLS: dict[str, Any] = {"calculate": calculate, "get_weather": get_weather}
SCHEMAS = {name: spec(tool) for name, tool in TOOLS.items()}
SPECS = list(SCHEMAS.values())  # what each request's `tools` holds


def run_call(name: str, arguments: str) -> str:
    if name not in TOOLS:
        return f"error: unknown tool '{name}'; available tools: {', '.join(TOOLS)}"
    try:
        args = json.loads(arguments)  # the arguments come as JSON text: a second decoding
        schema = SCHEMAS[name]["function"]["parameters"]  # checked against what the model saw
        found = [f"missing required argument '{p}'" for p in schema["required"] if p not in args]
        found += [f"unexpected argument '{a}'" for a in args if a not in schema["properties"]]
        found += [f"'{a}' must be a string" for a in args if not isinstance(args[a], str)]
        if found:  # every problem at once, one line each
            return "error: invalid arguments: " + "; ".join(found)
        return json.dumps(TOOLS[name](**args), ensure_ascii=False)
    except Exception as error:  # a bad call is answered with its error: the model can fix it
        return f"error: {type(error).__name__}: {error}"


def agent_loop(question: str) -> str:
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    for _ in range(5):  # a model that never stops calling must not loop forever
        response = HTTP.post(URL, json={"model": MODEL, "messages": messages, "tools": SPECS})
        if response.is_error:
            sys.exit(f"HTTP {response.status_code}: {response.text}")
        messages.append(message := response.json()["choices"][0]["message"])  # sent back as is
        if not message.get("tool_calls"):  # no call: the reply is the answer
            return str(message.get("content") or "")
        for call in message["tool_calls"]:  # one result per call, tied to it by its id
            result = run_call(call["function"]["name"], call["function"]["arguments"])
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    sys.exit("no answer after 5 iterations")


if __name__ == "__main__":
    print(agent_loop(" ".join(sys.argv[1:]) or "What's 12*5+3?"))
