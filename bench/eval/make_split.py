"""Split bench/eval/questions.json into a tuning half and a held-out half: bench/eval/split.json.

    python bench/eval/make_split.py          # writes split.json (refuses to move a question)
    python bench/eval/make_split.py --check  # exits 1 if split.json is not what the rule gives

The rule, written into split.json too: questions are grouped by category (the first tool their
answer needs) and by whether they need more than one call. Within each group the ids are taken
one language at a time, shuffled by random.Random(f"{SEED}:{group}:{lang}"), and dealt one by
one to the two halves in turn, starting with the half that has fewer of that group so far, then
fewer of that language, then fewer in all (held-out on a tie). So every category's single- and
multi-call questions, in both languages, are split as evenly as the counts allow, and nobody
chose which question went where. The split is fixed before anything is tuned: defaults and
thresholds are chosen on the tuning half only, and the held-out half is the headline.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

EVAL = Path(__file__).resolve().parent
QUESTIONS = EVAL / "questions.json"
SPLIT = EVAL / "split.json"
SEED = 24
HALVES = ("held-out", "tuning")

CATEGORIES = {
    "get_weather": "weather",
    "get_time": "time",
    "calculate": "calculate",
    "convert_units": "units",
    "convert_currency": "currency",
    "country_facts": "country",
    "days_between": "days",
}


def category(question: dict[str, Any]) -> str:
    return CATEGORIES[question["truth"][0]["tool"]]


def multi_call(question: dict[str, Any]) -> bool:
    return len(question["truth"]) > 1


def split(questions: list[dict[str, Any]], seed: int = SEED) -> dict[str, list[str]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for question in questions:
        key = f"{category(question)}/{'multi' if multi_call(question) else 'single'}"
        groups.setdefault(key, []).append(question)
    halves: dict[str, list[str]] = {half: [] for half in HALVES}
    in_group: Counter[tuple[str, str]] = Counter()
    in_lang: Counter[tuple[str, str]] = Counter()
    for key in sorted(groups):
        for lang in sorted({str(q["lang"]) for q in groups[key]}):
            members = sorted(
                (q for q in groups[key] if q["lang"] == lang), key=lambda q: str(q["id"])
            )
            random.Random(f"{seed}:{key}:{lang}").shuffle(members)
            # Whichever half has fewer of this group, then of this language, then in all.
            first = min(
                HALVES,
                key=lambda h: (in_group[h, key], in_lang[h, lang], len(halves[h]), HALVES.index(h)),
            )
            for turn, question in enumerate(members, start=HALVES.index(first)):
                half = HALVES[turn % 2]
                halves[half].append(question["id"])
                in_group[half, key] += 1
                in_lang[half, lang] += 1
    return {half: sorted(ids) for half, ids in halves.items()}


def counts(questions: list[dict[str, Any]], ids: list[str]) -> dict[str, dict[str, int]]:
    chosen = [q for q in questions if q["id"] in set(ids)]
    return {
        "category": dict(sorted(Counter(category(q) for q in chosen).items())),
        "lang": dict(sorted(Counter(q["lang"] for q in chosen).items())),
        "calls": dict(
            sorted(Counter("multi" if multi_call(q) else "single" for q in chosen).items())
        ),
    }


def document(questions: list[dict[str, Any]]) -> dict[str, Any]:
    halves = split(questions)
    return {
        "about": (__doc__ or "").split("\n\n", 2)[2].strip().replace("\n", " "),
        "seed": SEED,
        "rule": "group by (category = the first tool of 'truth', single or multi call); within a "
        "group, per lang (sorted), shuffle the sorted ids with "
        f"random.Random(f'{SEED}:{{group}}:{{lang}}') and deal them to the halves in turn, "
        "starting with the half that has fewer of the group, then of the lang, then in all "
        "(held-out on a tie)",
        "halves": halves,
        "counts": {half: counts(questions, ids) for half, ids in halves.items()},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    questions = json.loads(QUESTIONS.read_text(encoding="utf-8"))["questions"]
    wanted = document(questions)
    text = json.dumps(wanted, ensure_ascii=False, indent=1) + "\n"
    if args.check:
        same = SPLIT.exists() and SPLIT.read_text(encoding="utf-8") == text
        print(
            "make_split: split.json follows the rule" if same else "make_split: split.json differs"
        )
        return 0 if same else 1
    if SPLIT.exists():
        # A new question must not move an old one from the half it was fixed in.
        old = json.loads(SPLIT.read_text(encoding="utf-8"))["halves"]
        moved = [i for half in HALVES for i in old[half] if i not in wanted["halves"][half]]
        if any(i in set(wanted["halves"][h]) for i in moved for h in HALVES):
            print(f"make_split: refused: it would move {', '.join(moved)}", file=sys.stderr)
            return 1
    SPLIT.write_text(text, encoding="utf-8")
    print(f"make_split: wrote {SPLIT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
