"""Retrieval recall: how often the right tool is among the top 3, 5 and 10 that toolcall ranks
for a question, over the catalogue in examples/catalogue (about 200 tools, with the bundled
tools beside them) and its questions (Chinese and English, each naming its right tool).

    python bench/bench_retrieval.py                       # lexical (BM25) only
    python bench/bench_retrieval.py --embed-url http://127.0.0.1:8094/v1 --embed-model qwen

Writes bench/results/retrieval_recall.md (the table, each miss with what ranked above it) and
bench/results/retrieval_recall.json. A ranker not measured this time (embed, without
--embed-url) keeps its recorded rows: a lexical run does not erase a model's figures.
Target: lexical recall@5 >= 0.95. A question counts as found at k when its `tool`, or one of
its `also`, is among the first k.

Split: ranking is tuned only against the questions at even positions of questions.toml (0, 2,
4, ...); the odd ones are held out, so the held-out figure says how well a change generalises.
`--tune` measures the tune half alone and prints it without writing results: the loop to tune
with, which never shows a held-out question.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolcall_cli.messages import ToolSpec
from toolcall_cli.models.embeddings import EmbeddingClient
from toolcall_cli.tools.loader import bundled_tools_dir, load_tools
from toolcall_cli.tools.retrieval import LEXICAL, EmbedRanker, Ranker, rank

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = ROOT / "examples" / "catalogue"
RESULTS = ROOT / "bench" / "results"
CUTS = (3, 5, 10)
TARGET_AT_5 = 0.95


SPLITS = ("tune", "held-out")


@dataclass(frozen=True)
class Question:
    text: str
    lang: str
    right: frozenset[str]
    split: str
    """"tune" (an even position in questions.toml) or "held-out" (an odd one)."""


def questions(path: Path) -> list[Question]:
    table = tomllib.loads(path.read_text(encoding="utf-8"))
    return [
        Question(
            item["question"],
            item["lang"],
            frozenset([item["tool"], *item.get("also", [])]),
            SPLITS[position % 2],
        )
        for position, item in enumerate(table["questions"])
    ]


def catalogue_specs() -> list[ToolSpec]:
    loaded = load_tools([bundled_tools_dir(), CATALOGUE])
    if loaded.problems:
        sys.exit("the catalogue does not load cleanly:\n" + "\n".join(loaded.problems))
    return loaded.registry.specs()


def measure(ranker: Ranker, specs: list[ToolSpec], asked: list[Question]) -> dict[str, Any]:
    """Recall at each cut, overall and per language, and each question missed at 5."""
    found: dict[str, dict[int, int]] = {"all": dict.fromkeys(CUTS, 0)}
    counts: dict[str, int] = {"all": 0}
    misses: list[dict[str, Any]] = []
    started = time.perf_counter()
    for question in asked:
        top = [name for name, _ in rank(question.text, specs, max(CUTS), ranker)]
        for group in ("all", question.lang, question.split):
            found.setdefault(group, dict.fromkeys(CUTS, 0))
            counts[group] = counts.get(group, 0) + 1
            for cut in CUTS:
                found[group][cut] += bool(question.right & set(top[:cut]))
        if not question.right & set(top[:5]):
            misses.append(
                {
                    "question": question.text,
                    "split": question.split,
                    "right": sorted(question.right),
                    "top5": top[:5],
                }
            )
    seconds = time.perf_counter() - started
    recall = {
        group: {f"@{cut}": round(found[group][cut] / counts[group], 3) for cut in CUTS}
        for group in found
    }
    return {
        "ranker": ranker.name,
        "questions": counts,
        "recall": recall,
        "ms_per_question": round(1000 * seconds / max(len(asked), 1), 2),
        "misses_at_5": misses,
    }


def report(results: list[dict[str, Any]], tools: int, asked: int) -> str:
    lines = [
        "# Retrieval recall",
        "",
        f"{tools} tools (examples/catalogue plus the bundled tools.d), {asked} questions "
        "(examples/catalogue/questions.toml). Written by `bench/bench_retrieval.py`.",
        "",
        "| ranker | questions | recall@3 | recall@5 | recall@10 | zh @5 | en @5 | ms/question "
        "| target @5 ≥ 0.95 |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for result in results:
        r = result["recall"]
        verdict = "PASS" if r["all"]["@5"] >= TARGET_AT_5 else "SHORT"
        if result["ranker"] != "lexical":
            verdict = f"({verdict}; the target is lexical's)"
        lines.append(
            f"| {result['ranker']} | {result['questions']['all']} | {r['all']['@3']:.3f} "
            f"| {r['all']['@5']:.3f} | {r['all']['@10']:.3f} | {r.get('zh', {}).get('@5', 0):.3f} "
            f"| {r.get('en', {}).get('@5', 0):.3f} | {result['ms_per_question']} | {verdict} |"
        )
    lines += [
        "",
        "## By split",
        "",
        "Tuned against the questions at even positions of questions.toml; the odd ones are "
        "held out.",
        "",
        "| ranker | split | questions | recall@3 | recall@5 | recall@10 |",
        "|---|---|---|---|---|---|",
    ]
    for result in results:
        for split in (*SPLITS, "all"):
            r = result["recall"].get(split)
            if r is not None:
                lines.append(
                    f"| {result['ranker']} | {split} | {result['questions'][split]} "
                    f"| {r['@3']:.3f} | {r['@5']:.3f} | {r['@10']:.3f} |"
                )
    for result in results:
        lines += ["", f"## Missed at 5 by {result['ranker']}", ""]
        lines += [
            f"- ({miss['split']}) {miss['question']} — right: {', '.join(miss['right'])}; "
            f"top 5: {', '.join(miss['top5'])}"
            for miss in result["misses_at_5"]
        ] or ["(none)"]
    return "\n".join(lines) + "\n"


def merged(recorded: list[dict[str, Any]], fresh: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The recorded results with each ranker measured again replaced by its fresh result, in
    the recorded order; a ranker new to the record comes last."""
    by_ranker = {result["ranker"]: result for result in fresh}
    kept = [by_ranker.pop(result["ranker"], result) for result in recorded]
    return [*kept, *by_ranker.values()]


def recorded_results(path: Path) -> list[dict[str, Any]]:
    """What the results file holds (nothing yet: none)."""
    if not path.is_file():
        return []
    results: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embed-url", help="an OpenAI-compatible API root with /embeddings")
    parser.add_argument("--embed-model", default="embed", help="the model name it is sent")
    parser.add_argument("--embed-label", default="", help="said beside the embed row")
    parser.add_argument(
        "--tune",
        action="store_true",
        help="measure only the tune half (even positions) and print it; write no results",
    )
    args = parser.parse_args()
    specs = catalogue_specs()
    asked = questions(CATALOGUE / "questions.toml")
    if args.tune:
        asked = [question for question in asked if question.split == "tune"]
    rankers: list[Ranker] = [LEXICAL]
    if args.embed_url:
        client = EmbeddingClient(url=args.embed_url, model=args.embed_model, timeout=300)
        rankers.append(EmbedRanker(client, args.embed_model))
    results = [measure(ranker, specs, asked) for ranker in rankers]
    for result in results:
        if result["ranker"] == "embed" and args.embed_label:
            result["ranker"] = f"embed ({args.embed_label})"
    if args.tune:
        print(report(results, len(specs), len(asked)))
        return
    RESULTS.mkdir(parents=True, exist_ok=True)
    results = merged(recorded_results(RESULTS / "retrieval_recall.json"), results)
    text = report(results, len(specs), len(asked))
    (RESULTS / "retrieval_recall.json").write_text(
        json.dumps(results, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    (RESULTS / "retrieval_recall.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
