"""Benchmark: the streaming tool-call text parser fed 1-character chunks, against its targets.

Run from the repo root: `.venv/bin/python bench/bench_stream_parser.py`. Results are printed and
written to bench/results/stream_parser.txt. Timing is never asserted in tests; this is the check.
"""

from __future__ import annotations

import json
import platform
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from toolcall_cli.strategies.text_parser import CallTextParser, parse_text  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "stream_parser.txt"
TARGET_MB_S = 5.0
TARGET_GROWTH = 12.0
TARGET_VS_NAIVE = 100.0

_PROSE = [
    "好的，我来帮你查一下北京和上海今天的天气，然后换算一下汇率。",
    "Let me look that up for you; I will call a couple of tools first.",
    "根据工具返回的结果，明天可能会下雨，建议带伞。",
    "The result came back with an error, so I will retry with a corrected argument.",
    "这里有一个数学表达式 (3 + 4) * 5，我用计算器算一下。",
    "Note: braces like {this} and a < b in prose are only text, not calls.",
    "总结一下：温度 23°C，湿度 60%，空气质量良好。",
    'Here is a JSON-looking fragment {"a": 1} that is just data.',
]
_WORDS = [
    *["tool", "call", "weather", "file", "search", "result", "data"],
    *["工具", "调用", "天气", "文件", "搜索", "结果", "数据"],
]


def _long_argument(rng: random.Random, size: int, close_tag: str) -> str:
    """A long string value with Chinese, escapes and braces, as file contents often are."""
    lines: list[str] = []
    while sum(len(x) for x in lines) < size:
        words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(4, 12)))
        lines.append(f'{words} {{"k": {rng.randint(0, 99)}}} say "hi"\t{close_tag} end')
    return "\n".join(lines)


def _call(rng: random.Random, n: int, close_tag: str) -> str:
    arguments = {
        "path": f"notes/{n}.txt",
        "content": _long_argument(rng, rng.randint(200, 1200), close_tag),
        "mode": rng.choice(["w", "a"]),
        "lines": [rng.randint(0, 9) for _ in range(5)],
    }
    payload = json.dumps({"name": "write_file", "arguments": arguments}, ensure_ascii=False)
    if n % 7 == 3:
        return f"```json\n{payload}\n```"
    return f"<tool_call>\n{payload}\n</tool_call>"


def model_output(target_bytes: int, seed: int = 7, *, close_tag_in_arguments: bool = True) -> str:
    """A deterministic reply of about target_bytes UTF-8 bytes: prose plus many tool calls.

    Without close_tag_in_arguments, the arguments hold `</tool-call>` where they held a literal
    `</tool_call>`: the same reply for a parser that counts tags (bench/peers/vllm_method.py),
    which a closing tag inside a string would stop after the first call."""
    close_tag = "</tool_call>" if close_tag_in_arguments else "</tool-call>"
    rng = random.Random(seed)
    parts: list[str] = []
    size, n = 0, 0
    while size < target_bytes:
        piece = rng.choice(_PROSE) + "\n" if rng.random() < 0.6 else _call(rng, n, close_tag) + "\n"
        n += 1
        parts.append(piece)
        size += len(piece.encode())
    return "".join(parts)


def stream_parse(text: str) -> CallTextParser:
    parser = CallTextParser()
    feed = parser.feed
    for ch in text:
        feed(ch)
    parser.close()
    return parser


def naive_parse(text: str) -> None:
    """What a parser without state does: re-parse everything seen so far on every chunk."""
    for end in range(1, len(text) + 1):
        parse_text(text[:end])


def chunked(text: str, smallest: int, largest: int, seed: int = 3) -> list[str]:
    """The reply cut into chunks of smallest..largest characters, as a server streams it."""
    rng = random.Random(seed)
    pieces, at = [], 0
    while at < len(text):
        size = rng.randint(smallest, largest)
        pieces.append(text[at : at + size])
        at += size
    return pieces


def stream_parse_chunks(chunks: list[str]) -> CallTextParser:
    """CallTextParser fed these chunks, one feed() each."""
    parser = CallTextParser()
    feed = parser.feed
    for chunk in chunks:
        feed(chunk)
    parser.close()
    return parser


def naive_parse_chunks(chunks: list[str]) -> None:
    """The naive re-parse of everything seen so far, once per chunk."""
    seen = ""
    for chunk in chunks:
        seen += chunk
        parse_text(seen)


def timed(fn: Callable[[str], object], text: str, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn(text)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    small, large = model_output(20_000), model_output(200_000)
    lines = [
        "stream parser benchmark (1-character chunks)",
        f"python {platform.python_version()} on {platform.machine()}, {platform.system()}",
        "",
    ]
    timings = {}
    # Best of several runs: a 20 KB parse takes a few milliseconds, so one run is mostly noise.
    for label, text, repeat in (("20 KB", small, 25), ("200 KB", large, 5)):
        seconds = timed(stream_parse, text, repeat)
        timings[label] = seconds
        size = len(text.encode())
        batch = parse_text(text)
        streamed = stream_parse(text)
        same = (streamed.calls, streamed.errors, streamed.text) == (
            list(batch.calls),
            list(batch.errors),
            batch.text,
        )
        lines.append(
            f"{label:>6}: {size:>7} bytes, {len(text):>7} chars, {len(batch.calls):>3} calls, "
            f"{seconds * 1000:8.1f} ms, {size / seconds / 1e6:5.2f} MB/s, "
            f"{len(text) / seconds / 1e6:5.2f} Mchar/s, stream == batch: {same}"
        )
    naive = timed(naive_parse, small, repeat=1)
    # The target holds at both sizes: the slower of the two is what is checked.
    speed = min(
        len(small.encode()) / timings["20 KB"] / 1e6, len(large.encode()) / timings["200 KB"] / 1e6
    )
    growth = timings["200 KB"] / timings["20 KB"]
    size_ratio = len(large.encode()) / len(small.encode())
    ratio = naive / timings["20 KB"]
    lines += [
        f"naive re-parse of the whole buffer per chunk, 20 KB (measured in full): {naive:.2f} s",
        "",
        f"throughput (slower size): {speed:4.2f} MB/s  (target >= {TARGET_MB_S}) "
        f"{'PASS' if speed >= TARGET_MB_S else 'FAIL'}",
        f"growth 20 KB -> 200 KB: {growth:6.2f}x     (target <= {TARGET_GROWTH}x for "
        f"{size_ratio:.1f}x the bytes) {'PASS' if growth <= TARGET_GROWTH else 'FAIL'}",
        f"speed-up vs naive:      {ratio:6.0f}x     (target >= {TARGET_VS_NAIVE}x at 20 KB) "
        f"{'PASS' if ratio >= TARGET_VS_NAIVE else 'FAIL'}",
    ]
    report = "\n".join(lines) + "\n"
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(report, encoding="utf-8")
    print(report, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
