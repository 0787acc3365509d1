"""What a model answers right after its tools are withdrawn: the note last, or the question.

For each recorded run (realmodel_eval.py's records) whose trace shows the tools withdrawn or the
iteration limit reached, the first request sent after that is sent again to the server: as it was
recorded (`asis`, toolcall's note the last message), and with the user's question appended on its
own (`ask`). Each reply is graded as realmodel_eval.py grades an answer. Run it on the tuning
half's records only: it chose how toolcall ends a request without tools.

    python bench/replay_withdrawal.py RECORDS.jsonl --base-url http://127.0.0.1:8181/v1
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import realmodel_eval as bench  # the bench's own grader and tools

VARIANTS = ("asis", "ask")


def reply_text(base_url: str, body: dict[str, Any]) -> str:
    """The reply's text; a JSON-mode reply's `answer` when it is one."""
    sent = httpx.post(f"{base_url}/chat/completions", json=body, timeout=300)
    text = sent.json()["choices"][0]["message"].get("content") or ""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    if isinstance(value, dict) and isinstance(value.get("answer"), str):
        return value["answer"]
    return text


def request_after_withdrawal(trace: Path) -> dict[str, Any] | None:
    """The first request sent after the tools were withdrawn or the limit was reached."""
    events = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    turned = next(
        (i for i, e in enumerate(events) if e["kind"] in ("answer_without_tools", "limit_reached")),
        None,
    )
    if turned is None:
        return None
    later = (e for e in events[turned:] if e["kind"] == "iteration_started")
    return next((e["request"] for e in later), None)


def variant(request: dict[str, Any], name: str, question: str) -> dict[str, Any]:
    body = {k: v for k, v in request.items() if k not in ("stream", "stream_options")}
    body["messages"] = [dict(m) for m in request["messages"]]
    if name == "ask":
        body["messages"].append({"role": "user", "content": question})
    return body


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("records", type=Path)
    parser.add_argument("--base-url", required=True)
    args = parser.parse_args()
    data = json.loads((bench.EVAL / "questions.json").read_text(encoding="utf-8"))
    tools = bench.load_tool_functions([bench.bundled_tools_dir(), bench.BENCH_TOOLS])
    questions = {q["id"]: q for q in data["questions"]}
    right = dict.fromkeys(VARIANTS, 0)
    sent = 0
    for line in args.records.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        trace = Path(record.get("trace") or "")
        request = request_after_withdrawal(trace) if trace.is_file() else None
        if request is None:
            continue
        question = questions[record["qid"]]
        expected = bench.expected_answer(question, tools, data.get("now"))
        sent += 1
        shown = [record["qid"], record["system"], record["outcome"]]
        for name in VARIANTS:
            text = reply_text(args.base_url, variant(request, name, question["question"]))
            no_answer = bench.non_answer_kind(text, list(tools), record.get("results") or [])
            ok = expected.holds(text) and no_answer is None
            right[name] += ok
            shown.append(f"{name}:{'OK' if ok else 'x'} {text[:70]!r}")
        print(" | ".join(shown), flush=True)
    print(", ".join(f"{name}: {n}/{sent} right" for name, n in right.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
