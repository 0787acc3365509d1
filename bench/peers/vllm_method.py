"""The peer streaming parser: vLLM's method, run with the real partial-json-parser library.

Runs in the peers venv (bench/.venv-peers), never in toolcall's: bench/run.py calls
`PEER_PYTHON bench/peers/vllm_method.py CHUNKS.json` and reads one JSON line back.

It follows `Hermes2ProToolParser.extract_tool_calls_streaming` in vLLM's
vllm/entrypoints/openai/tool_parsers/hermes_tool_parser.py (the `hermes` parser, which Qwen2.5
models are served with), written again here from its steps, without vLLM or a tokenizer:

- the serving layer keeps `previous_text` and `current_text` (previous plus the delta);
- every delta counts the `<tool_call>` and `</tool_call>` tags in both texts, to tell text from a
  call being opened, continued or closed;
- inside a call, it splits the whole `current_text` on the open tag, takes the last part and
  re-parses it with `partial_json_parser.loads` (strings not allowed to be partial until the
  name has been sent, as vLLM's flags say), then `json.dumps` the arguments it has so far to
  find what is new.

That re-parse of the accumulated call text on every delta is the cost measured. The method
knows only the tags: a call in a ```json fence is text to it, and a literal `</tool_call>`
inside an argument closes the call early (both are counted, not fixed).
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import partial_json_parser
from partial_json_parser.core.exceptions import MalformedJSON
from partial_json_parser.core.options import Allow

START, END = "<tool_call>", "</tool_call>"


def parse_stream(chunks: list[str]) -> list[dict[str, Any]]:
    """Every call as last parsed, in order, the way the hermes parser streams them."""
    calls: list[dict[str, Any]] = []
    name_sent = False
    current_text = ""
    for delta in chunks:
        previous_text, current_text = current_text, current_text + delta
        if START not in current_text:
            continue  # plain text
        prev_starts, prev_ends = previous_text.count(START), previous_text.count(END)
        starts, ends = current_text.count(START), current_text.count(END)
        if starts == ends and prev_ends == ends and END not in delta:
            continue  # text between calls
        portion: str | None
        if END in delta:
            portion = current_text.split(START)[-1].split(END)[0].rstrip()
        flags = Allow.ALL if name_sent else Allow.ALL & ~Allow.STR
        if starts > ends and starts > prev_starts:
            # a new call; vLLM parses its first delta only when it held more than one token
            portion = current_text.split(START)[-1] if len(delta) > 1 else None
            calls.append({})
            name_sent = False
        elif starts > ends and starts == prev_starts:
            portion = current_text.split(START)[-1]
        elif starts == ends and ends >= prev_ends:
            continue  # the call closes: vLLM sends what is left of the arguments, no parse
        else:
            continue
        if not portion:
            continue
        try:
            parsed = partial_json_parser.loads(portion, flags)
        except (MalformedJSON, json.JSONDecodeError):
            continue
        if not isinstance(parsed, dict):
            continue
        if not name_sent:
            if parsed.get("name"):
                name_sent = True
                if parsed.get("arguments") is not None:
                    json.dumps(parsed["arguments"], ensure_ascii=False)
                calls[-1] = parsed
            continue
        arguments, before = parsed.get("arguments"), calls[-1].get("arguments")
        if arguments and not before:
            json.dumps(arguments, ensure_ascii=False)  # where the new arguments text begins
        calls[-1] = parsed
    return calls


def main() -> None:
    """Argument: a JSON file holding the chunks. Prints seconds and the calls found."""
    with open(sys.argv[1], encoding="utf-8") as source:
        chunks: list[str] = json.load(source)
    started = time.perf_counter()
    calls = parse_stream(chunks)
    seconds = time.perf_counter() - started
    named = sum(1 for call in calls if call.get("name"))
    print(json.dumps({"seconds": seconds, "calls": len(calls), "named": named}))


if __name__ == "__main__":
    main()
