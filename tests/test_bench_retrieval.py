"""bench/bench_retrieval.py, as docs/tools.md tells a reader to run it: a lexical run keeps the
embed ranker's recorded figures (measured against a model server the run does not have)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "bench_retrieval", ROOT / "bench" / "bench_retrieval.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_a_ranker_not_measured_again_keeps_its_recorded_figures() -> None:
    recorded = [{"ranker": "lexical", "ms": 7}, {"ranker": "embed (a model)", "ms": 4000}]
    fresh = [{"ranker": "lexical", "ms": 9}]
    assert bench().merged(recorded, fresh) == [
        {"ranker": "lexical", "ms": 9},
        {"ranker": "embed (a model)", "ms": 4000},
    ]


def test_a_ranker_new_to_the_record_comes_last() -> None:
    merged = bench().merged([{"ranker": "lexical"}], [{"ranker": "embed"}, {"ranker": "lexical"}])
    assert [result["ranker"] for result in merged] == ["lexical", "embed"]


def test_the_committed_record_holds_both_rankers() -> None:
    """What a lexical run found in the record, and now keeps."""
    results = bench().recorded_results(ROOT / "bench" / "results" / "retrieval_recall.json")
    assert results[0]["ranker"] == "lexical"
    assert any(result["ranker"].startswith("embed") for result in results)
