"""Builds toolcall_cli/data/real_outputs.jsonl, the corpus of real model outputs the tests and
katas read, from this project's own recordings in bench/results/*.jsonl (every reply a real
model gave toolcall's strategies there, one record per distinct text).

A reply is kept only when what it holds can be said without toolcall's parser, so the corpus
can show the parser wrong: one JSON object that is a call ({"name", "arguments"}), alone or in
one ```json fence; an OpenAI message whose tool_calls carry the calls; or prose with no brace,
backtick or tag in it, which holds no call. Everything else (two objects in one fence, a
peer's call syntax, a half-written object) is left out: its parse is a policy, not a fact.

    python bench/make_real_outputs.py           # rewrites toolcall_cli/data/real_outputs.jsonl
    python bench/make_real_outputs.py OUT.jsonl # writes it there instead
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
OUT = HERE.parent / "toolcall_cli" / "data" / "real_outputs.jsonl"
MODEL = "Qwen2.5-Coder-0.5B-Instruct Q4_K_M on llama.cpp's llama-server"
PER_KIND = 40
"""Replies kept of each kind (format and categories), the first found: enough to vary, few
enough that the tests over every one stay quick."""
OWN_SYSTEMS = re.compile(r"^(regex|stream|schema|default)")
"""toolcall's own strategies; the peers' replies (smolagents, langgraph, ...) answer their
prompts, in their formats."""
FENCE = re.compile(r"\A```(?:json)?\n(?P<body>.*)\n```\Z", re.DOTALL)


def as_call(value: Any) -> dict[str, Any] | None:
    """{"name", "arguments"} when `value` is one call object, else None."""
    if not isinstance(value, dict) or set(value) != {"name", "arguments"}:
        return None
    if not isinstance(value["name"], str) or not isinstance(value["arguments"], dict):
        return None
    return {"name": value["name"], "arguments": value["arguments"]}


def loaded(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def message_calls(value: Any) -> list[dict[str, Any]] | None:
    """The calls of an OpenAI assistant message with tool_calls, or None."""
    if not isinstance(value, dict) or value.get("role") != "assistant":
        return None
    calls = []
    for call in value.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            return None
        arguments = function.get("arguments")
        arguments = loaded(arguments) if isinstance(arguments, str) else arguments
        if not isinstance(arguments, dict):
            return None
        calls.append({"name": function["name"], "arguments": arguments})
    return calls or None


def described(text: str) -> dict[str, Any] | None:
    """The case a reply makes (format, expected calls and text), or None to leave it out."""
    stripped = text.strip()
    if not stripped:
        return None
    value = loaded(stripped)
    if (call := as_call(value)) is not None:
        return case("raw_json", [call], "", ["single_call", "no_tags"])
    if (calls := message_calls(value)) is not None:
        return case("openai_tool_calls_json", calls, None, ["native_message"])
    fenced = FENCE.match(stripped)
    if fenced and (call := as_call(loaded(fenced["body"]))) is not None:
        return case("raw_json", [call], "", ["single_call", "code_fence"])
    if not re.search(r"[{}`<>]", text):
        return case("raw_json", [], text, ["no_call"])
    return None


def case(
    form: str, calls: list[dict[str, Any]], content: str | None, kinds: list[str]
) -> dict[str, Any]:
    return {
        "format": form,
        "expected_calls": calls,
        "expected_content": content,
        "categories": kinds,
    }


def replies() -> list[tuple[str, str, str]]:
    """(source, strategy, text) of every reply toolcall's own strategies were given."""
    found = []
    for path in sorted(RESULTS.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            run = json.loads(line)
            system = str(run.get("system") or "")
            if not OWN_SYSTEMS.match(system):
                continue
            for index, text in enumerate(run.get("replies") or []):
                if isinstance(text, str):
                    where = f"bench/results/{path.name} line {number}, reply {index + 1}"
                    found.append((where, system, text))
    return found


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else OUT
    seen: set[str] = set()
    kinds: dict[str, int] = {}
    records = []
    for source, system, text in replies():
        made = described(text)
        if made is None:
            continue
        # A message differs from another by its call ids alone: one per set of calls is enough.
        same = json.dumps(made) if made["format"] == "openai_tool_calls_json" else text
        kind = made["format"] + "/" + "+".join(made["categories"])
        if same in seen or kinds.get(kind, 0) >= PER_KIND:
            continue
        seen.add(same)
        kinds[kind] = kinds.get(kind, 0) + 1
        number = len(records) + 1
        record = {"id": f"own-{number:03d}-{system}", "source": source, "model": MODEL}
        records.append(
            {**record, "text": text, **made, "provenance_kind": "toolcall_bench_recording"}
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )
    print(f"{len(records)} real outputs in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
