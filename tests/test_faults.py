"""Each offline-model fault, under each strategy it applies to: the engine recovers (and the
recovery shows in the events), or stops with a clear event. Pairs that do not apply are listed
in NOT_APPLICABLE and checked to leave the reply untouched."""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
from in_process import toolcall

from toolcall_cli.events import (
    AnswerWithoutTools,
    Event,
    FinalAnswer,
    LimitReached,
    ModelReplied,
    ParseError,
    RunFinished,
    TextDelta,
    ToolCallParsed,
    ToolFinished,
    ToolStarted,
)
from toolcall_cli.loop import Limits, run
from toolcall_cli.messages import user
from toolcall_cli.offline import FAULT_KINDS, OfflineModel, UnknownFault, make_faults
from toolcall_cli.render import make_renderer
from toolcall_cli.strategies import get_strategy
from toolcall_cli.strategies.base import Strategy
from toolcall_cli.tools.coerce import SYNONYMS, similar_parameter
from toolcall_cli.tools.loader import bundled_tools_dir, load_tools
from toolcall_cli.tools.registry import ToolRegistry
from toolcall_cli.wire import ModelRequest

REGISTRY: ToolRegistry = load_tools([bundled_tools_dir()]).registry

STRATEGIES: dict[str, Callable[[], Strategy]] = {
    "regex": lambda: get_strategy("regex"),
    "schema": lambda: get_strategy("schema", schema_mode="tools"),
    "schema_json": lambda: get_strategy("schema", schema_mode="json"),
    "stream": lambda: get_strategy("stream", stream_mode="tags"),
    "stream_native": lambda: get_strategy("stream", stream_mode="native"),
}
TEXT = ("regex", "stream")
NATIVE = ("schema", "stream_native")

NOT_APPLICABLE: dict[tuple[str, str], str] = {
    **{
        (kind, strategy): "text protocol only: prose next to native tool_calls is normal, and "
        "JSON mode's grammar allows nothing around the object; there are no tags to fence or drop"
        for kind in ("prose_around", "code_fence", "missing_close_tag")
        for strategy in (*NATIVE, "schema_json")
    },
    **{
        ("split_tags", strategy): "only a streamed text reply has tags that chunks can split"
        for strategy in ("regex", *NATIVE, "schema_json")
    },
    ("broken_batch", "schema_json"): "JSON mode carries one call per reply: there is no batch",
}

WEATHER = "北京今天适合穿短袖吗？"
SUM = "What's 12*5+3?"
TWO_CITIES = "北京和上海今天天气怎么样？"
CONVERSION = "25°C 是多少华氏度？"


def run_events(
    question: str, kinds: Sequence[str], strategy: str, *, seed: int = 0, rate: float = 1.0
) -> list[Event]:
    model = OfflineModel(seed=seed, faults=make_faults(kinds, rate))
    return list(
        run(
            question,
            model=model,
            strategy=STRATEGIES[strategy](),
            registry=REGISTRY,
            history=[],
            limits=Limits(),
        )
    )


T = TypeVar("T")


def of_type(events: Sequence[Event], kind: type[T]) -> list[T]:
    return [e for e in events if isinstance(e, kind)]


def answer(events: Sequence[Event]) -> str:
    [final] = of_type(events, FinalAnswer)
    return final.text


def finished(events: Sequence[Event]) -> RunFinished:
    last = events[-1]
    assert isinstance(last, RunFinished)
    return last


def failures(events: Sequence[Event]) -> list[int]:
    """Positions of every failure the engine fed back: parse errors and error results."""
    return [
        i
        for i, e in enumerate(events)
        if isinstance(e, ParseError) or (isinstance(e, ToolFinished) and not e.result.ok)
    ]


def good_results(events: Sequence[Event]) -> list[int]:
    return [i for i, e in enumerate(events) if isinstance(e, ToolFinished) and e.result.ok]


def failed_then_recovered(events: Sequence[Event]) -> bool:
    """A failure was fed back, and a later call succeeded."""
    bad, good = failures(events), good_results(events)
    return bool(bad) and bool(good) and bad[0] < good[-1]


def error_text(events: Sequence[Event]) -> str:
    return "\n".join(
        e.result.content for e in of_type(events, ToolFinished) if not e.result.ok
    ) + "\n".join(e.message for e in of_type(events, ParseError))


def replies(events: Sequence[Event]) -> list[ModelReplied]:
    return of_type(events, ModelReplied)


# --- what recovery looks like, kind by kind ----------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    question: str
    expected: tuple[str, ...]
    """Every one of these appears in the final answer."""
    shows: Callable[[list[Event], str], bool]
    """The fault and the recovery are visible in the events (given the strategy)."""


def repaired_with(sign: Callable[[str], bool]) -> Callable[[list[Event], str], bool]:
    def shows(events: list[Event], strategy: str) -> bool:
        calls = [e.call for e in of_type(events, ToolCallParsed)]
        return any(c.repaired and sign(c.raw) for c in calls) and not failures(events)

    return shows


def error_then_fixed(*phrases: str) -> Callable[[list[Event], str], bool]:
    def shows(events: list[Event], strategy: str) -> bool:
        text = error_text(events)
        return failed_then_recovered(events) and all(p in text for p in phrases)

    return shows


def coerced(events: list[Event], strategy: str) -> bool:
    results = [e.result for e in of_type(events, ToolFinished)]
    return any(r.ok and r.coerced for r in results) and not failures(events)


def left_out(events: list[Event], strategy: str) -> bool:
    """The call ran without the argument its tool does not take, and the model was told."""
    first = next(e.result for e in of_type(events, ToolFinished))
    said = "Ran without" in first.content and any("left out" in c for c in first.coerced)
    return first.ok and said and not failures(events)


def repeated(events: list[Event], strategy: str) -> bool:
    results = [e.result for e in of_type(events, ToolFinished)]
    return [r.cached for r in results] == [False, True] and all(r.ok for r in results)


def fenced(events: list[Event], strategy: str) -> bool:
    first = replies(events)[0].raw
    return "```json" in first and "<tool_call>" not in first and bool(good_results(events))


def unclosed(events: list[Event], strategy: str) -> bool:
    first = replies(events)[0].raw
    return "<tool_call>" in first and "</tool_call>" not in first and not failures(events)


def prose_kept(events: list[Event], strategy: str) -> bool:
    shown = replies(events)[0].text
    return "请稍等" in shown and "<tool_call>" not in shown and bool(good_results(events))


def batch_partly_failed(events: list[Event], strategy: str) -> bool:
    first_round = [e for e in events if isinstance(e, (ParseError, ToolFinished))][:2]
    return (
        any(isinstance(e, ParseError) for e in first_round)
        and any(isinstance(e, ToolFinished) and e.result.ok for e in first_round)
        and len(good_results(events)) == 2
    )


def cut_then_resent(events: list[Event], strategy: str) -> bool:
    first = replies(events)[0]
    cut = [e for e in of_type(events, ParseError) if e.truncated]
    return first.finish_reason == "length" and bool(cut) and failed_then_recovered(events)


def parsed_whole(events: list[Event], strategy: str) -> bool:
    return bool(good_results(events)) and not failures(events)


SCENARIOS: dict[str, Scenario] = {
    "unknown_tool": Scenario(
        WEATHER, ("北京", "°C"), error_then_fixed("unknown tool", "Did you mean `get_weather`")
    ),
    "wrong_param": Scenario(WEATHER, ("北京", "°C"), error_then_fixed("did you mean `city`")),
    "missing_arg": Scenario(SUM, ("63",), error_then_fixed("missing required argument")),
    "extra_arg": Scenario(WEATHER, ("北京", "°C"), left_out),
    "wrong_type": Scenario(CONVERSION, ("77",), coerced),
    "repeat_call": Scenario(SUM, ("63",), repeated),
    "single_quotes": Scenario(WEATHER, ("北京", "°C"), repaired_with(lambda raw: "'北京'" in raw)),
    "trailing_comma": Scenario(SUM, ("63",), repaired_with(lambda raw: '",}' in raw)),
    "unquoted_keys": Scenario(SUM, ("63",), repaired_with(lambda raw: "{expression:" in raw)),
    "code_fence": Scenario(WEATHER, ("北京", "°C"), fenced),
    "missing_close_tag": Scenario(SUM, ("63",), unclosed),
    "prose_around": Scenario(WEATHER, ("北京", "°C"), prose_kept),
    "broken_batch": Scenario(TWO_CITIES, ("北京", "上海"), batch_partly_failed),
    "truncated": Scenario(SUM, ("63",), cut_then_resent),
    "split_tags": Scenario(WEATHER, ("北京", "°C"), parsed_whole),
}


SAME_FAILURE_AGAIN = {("missing_arg", "stream_native")}
"""Pairs where the offline model repeats its broken call unchanged once."""


def applicable_pairs() -> list[Any]:
    pairs = []
    for kind in FAULT_KINDS:
        for strategy in STRATEGIES:
            if kind == "no_tool" or (kind, strategy) in NOT_APPLICABLE:
                continue
            pairs.append(pytest.param(kind, strategy, id=f"{kind}-{strategy}"))
    return pairs


@pytest.mark.parametrize(("kind", "strategy"), applicable_pairs())
def test_the_engine_recovers_from_the_fault(kind: str, strategy: str) -> None:
    scenario = SCENARIOS[kind]
    events = run_events(scenario.question, [kind], strategy)
    if (kind, strategy) in SAME_FAILURE_AGAIN:
        # The offline model sends the same broken call twice here: a failed call repeated
        # unchanged withdraws the tools, and the run ends with what the model then says.
        (withdrawn,) = of_type(events, AnswerWithoutTools)
        assert withdrawn.repeated and "failed again the same way" in withdrawn.message
        assert finished(events).stop_reason == "answered"
        return
    assert scenario.shows(events, strategy), [type(e).__name__ for e in events]
    text = answer(events)
    assert all(word in text for word in scenario.expected), text
    assert finished(events).stop_reason == "answered"
    assert finished(events).iterations <= Limits().max_iterations


def test_every_kind_has_a_scenario_and_every_exclusion_is_a_real_pair() -> None:
    assert set(SCENARIOS) | {"no_tool"} == set(FAULT_KINDS)
    assert {k for k, _ in NOT_APPLICABLE} <= set(FAULT_KINDS)
    assert {s for _, s in NOT_APPLICABLE} <= set(STRATEGIES)


# --- pairs that do not apply -------------------------------------------------------------------


def first_reply(question: str, strategy: str, kinds: Sequence[str]) -> list[dict[str, Any]]:
    request = STRATEGIES[strategy]().build_request([user(question)], REGISTRY.specs(), "offline")
    model = OfflineModel(seed=3, faults=make_faults(kinds))
    return list(model.stream(ModelRequest(request.body)))


@pytest.mark.parametrize(("kind", "strategy"), sorted(NOT_APPLICABLE))
def test_a_fault_that_does_not_apply_leaves_the_reply_alone(kind: str, strategy: str) -> None:
    question = TWO_CITIES if kind == "broken_batch" else WEATHER
    assert first_reply(question, strategy, [kind]) == first_reply(question, strategy, [])


WIRES = {
    "regex": ("regex", None, "tags"),
    "schema": ("schema", None, "tags"),
    "schema_json": ("schema", "json", "tags"),
    "stream": ("stream", None, "tags"),
    "stream_native": ("stream", None, "native"),
}


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_the_run_names_the_faults_its_strategy_gives_no_chance(strategy: str) -> None:
    # A clean run under --faults split_tags (regex) read as one that survived the fault.
    from toolcall_cli.app._model_choice import idle_faults_note

    idle = sorted(kind for kind, s in NOT_APPLICABLE if s == strategy)
    notes = idle_faults_note(list(FAULT_KINDS), *WIRES[strategy])
    if not idle:
        assert notes == ()
        return
    [note] = notes
    assert note.startswith(f"--faults {', '.join(k for k in FAULT_KINDS if k in idle)}: ")


def test_the_view_says_once_which_faults_cannot_fire(tmp_path: Path) -> None:
    done = toolcall("run", "--no-trace", "--faults", "split_tags,wrong_param", SUM, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    note = "info: --faults split_tags: cannot happen with strategy regex, so the run shows none"
    assert done.stdout.count(note) == 1, done.stdout


@pytest.mark.parametrize("strategy", ["regex", "schema", "stream_native"])
def test_a_fault_that_applies_changes_the_reply(strategy: str) -> None:
    # The check above could pass for a fault that never does anything; this one could not.
    assert first_reply(WEATHER, strategy, ["single_quotes"]) != first_reply(WEATHER, strategy, [])


# --- 硬答: nothing can catch it ----------------------------------------------------------------


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_no_tool_ends_with_an_answer_no_tool_call_backs(strategy: str) -> None:
    events = run_events(WEATHER, ["no_tool"], strategy)
    assert not of_type(events, ToolCallParsed) and not of_type(events, ToolStarted)
    assert finished(events).tool_calls == 0 and finished(events).iterations == 1
    text = answer(events)
    assert "北京" in text and "°C" in text
    # The invented temperature is not the tool's: the tool was never asked.
    real = run_events(WEATHER, [], strategy)
    assert text != answer(real)


def test_the_plain_view_shows_that_no_tool_was_called() -> None:
    out = io.StringIO()
    renderer = make_renderer("plain", out)
    for event in run_events(WEATHER, ["no_tool"], "regex"):
        renderer.handle(event)
    renderer.close()
    shown = out.getvalue()
    assert "0 tool calls" in shown and "call get_weather" not in shown


def test_no_tool_invents_arithmetic_rather_than_calculating() -> None:
    text = answer(run_events(SUM, ["no_tool"], "regex"))
    assert text.startswith("12*5+3 = ") and text != "12*5+3 = 63"


# --- streaming: tags split on purpose ----------------------------------------------------------


def chunk_boundaries(chunks: list[dict[str, Any]]) -> tuple[str, set[int]]:
    pieces = [
        c["choices"][0]["delta"].get("content") or ""
        for c in chunks
        if c.get("choices") and "delta" in c["choices"][0]
    ]
    ends, position = set(), 0
    for piece in pieces:
        position += len(piece)
        ends.add(position)
    return "".join(pieces), ends


@pytest.mark.parametrize("seed", range(5))
def test_split_tags_ends_a_chunk_inside_every_tag(seed: int) -> None:
    request = STRATEGIES["stream"]().build_request([user(TWO_CITIES)], REGISTRY.specs(), "offline")
    model = OfflineModel(seed=seed, faults=make_faults(["split_tags"]))
    text, ends = chunk_boundaries(list(model.stream(ModelRequest(request.body))))
    tags = [
        (start, start + len(tag))
        for tag in ("<tool_call>", "</tool_call>")
        for start in [i for i in range(len(text)) if text.startswith(tag, i)]
    ]
    assert len(tags) == 4
    assert all(any(a < end < b for end in ends) for a, b in tags)


def test_split_tags_leaves_no_tag_in_the_shown_text() -> None:
    events = run_events(TWO_CITIES, ["split_tags"], "stream")
    shown = "".join(e.text for e in of_type(events, TextDelta))
    assert "tool_call" not in shown and "<" not in shown
    assert len(of_type(events, ToolCallParsed)) == 2


# --- how often, and how deterministically ------------------------------------------------------

CORRECTS_SEED, REPEATS_SEED = 1, 0  # found by trying seeds; they change with the request text
"""Seeds where the model fixes a reported wrong_param at once, and where it repeats it once."""


def test_after_a_call_cut_before_its_name_the_retry_names_the_tool() -> None:
    # The cut call's result block has no name, and the model said "The call to  failed".
    events = run_events(SUM, ["truncated"], "regex")
    retry = of_type(events, ModelReplied)[1].text
    assert retry.startswith("The call to calculate failed ("), retry


def test_the_model_usually_corrects_itself_after_the_error() -> None:
    events = run_events(WEATHER, ["wrong_param"], "regex", seed=CORRECTS_SEED)
    assert len(failures(events)) == 1 and "°C" in answer(events)


def test_with_another_seed_it_repeats_the_mistake_once_then_corrects_it() -> None:
    events = run_events(WEATHER, ["wrong_param"], "regex", seed=REPEATS_SEED)
    assert len(failures(events)) == 2 and "°C" in answer(events)
    assert finished(events).iterations == 4


def test_wrong_param_draws_its_own_names_and_the_engine_names_the_right_one() -> None:
    """The fault's wrong names come from no table of the engine's; the engine's hint must find
    the right name on its own merits, not because the fault drew it from the hint's table."""
    tabled = set().union(*SYNONYMS)
    drawn: set[str] = set()
    for question, meant in ((WEATHER, "city"), (SUM, "expression")):
        for seed in range(10):
            events = run_events(question, ["wrong_param"], "regex", seed=seed)
            call = of_type(events, ToolCallParsed)[0].call
            found = REGISTRY.get(call.name)
            assert found is not None and isinstance(call.arguments, dict)
            properties = found.spec.parameters["properties"]
            [wrong] = [name for name in call.arguments if name not in properties]
            drawn.add(wrong)
            assert f"unexpected argument `{wrong}`: did you mean `{meant}`?" in error_text(events)
            # Without the "one missing, one unknown" guess too, from the name alone:
            described = {n: s.get("description", "") for n, s in properties.items()}
            assert similar_parameter(wrong, list(properties), [], described) == meant
    assert len(drawn) >= 4, drawn
    assert {name for name in drawn if name.casefold() not in tabled}, drawn


@pytest.mark.parametrize("kind", ["wrong_param", "unknown_tool", "missing_arg", "truncated"])
def test_a_reported_mistake_is_repeated_sometimes_and_never_twice(kind: str) -> None:
    question = SUM if kind in ("missing_arg", "truncated") else WEATHER
    counts = [len(failures(run_events(question, [kind], "regex", seed=s))) for s in range(30)]
    assert set(counts) == {1, 2}
    assert 2 <= counts.count(2) <= 12  # about one time in five


@pytest.mark.parametrize("strategy", ["regex", "stream", "schema_json"])
def test_the_same_seed_gives_the_same_run(strategy: str) -> None:
    kinds = ["single_quotes", "wrong_param", "truncated"]

    def trace(events: list[Event]) -> tuple[list[Any], list[Any], str]:
        # Timings differ between runs, and a streamed tool may finish before or after the reply
        # does; what the model said and what came back may not differ.
        said = [(e.raw, e.finish_reason) for e in of_type(events, ModelReplied)]
        results = [e.result for e in of_type(events, ToolFinished)]
        came_back = sorted((r.call_id, r.content) for r in results)
        return said, came_back, answer(events)

    first = trace(run_events(WEATHER, kinds, strategy, seed=7))
    assert trace(run_events(WEATHER, kinds, strategy, seed=7)) == first
    assert len(first[0]) >= 3  # the faults fired: more than one call round


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_rate_zero_means_no_fault(strategy: str) -> None:
    every = list(FAULT_KINDS)
    for question in (WEATHER, TWO_CITIES):
        request = STRATEGIES[strategy]().build_request([user(question)], REGISTRY.specs(), "m")
        faulty = OfflineModel(seed=1, faults=make_faults(every, rate=0.0))
        plain = OfflineModel(seed=1)
        body = ModelRequest(request.body)
        assert list(faulty.stream(body)) == list(plain.stream(body))
    events = run_events(WEATHER, every, strategy, rate=0.0)
    assert not failures(events) and finished(events).iterations == 2


def test_a_rate_between_fires_on_some_seeds_only() -> None:
    runs = [run_events(SUM, ["single_quotes"], "regex", seed=s, rate=0.5) for s in range(20)]
    fired = [any(e.call.repaired for e in of_type(events, ToolCallParsed)) for events in runs]
    assert 3 <= fired.count(True) <= 17


def test_every_fault_at_once_ends_in_an_answer_or_a_clear_limit() -> None:
    kinds = [k for k in FAULT_KINDS if k != "no_tool"]
    for strategy in STRATEGIES:
        for question in (WEATHER, TWO_CITIES):
            events = run_events(question, kinds, strategy)
            end = finished(events)
            assert end.stop_reason in ("answered", "limit")
            assert any(isinstance(e, (FinalAnswer, LimitReached)) for e in events)


# --- building faults ---------------------------------------------------------------------------


def test_make_faults_takes_names_and_comma_lists_in_application_order() -> None:
    faults = make_faults(["truncated", "single_quotes,wrong_param"])
    assert [f.kind for f in faults] == ["wrong_param", "single_quotes", "truncated"]
    assert len(make_faults(list(FAULT_KINDS))) == len(FAULT_KINDS)


def test_an_unknown_fault_name_lists_the_valid_ones() -> None:
    with pytest.raises(UnknownFault) as raised:
        make_faults(["single_quote"])
    assert "'single_quote'" in str(raised.value)
    assert all(kind in str(raised.value) for kind in FAULT_KINDS)
    assert isinstance(raised.value, ValueError)


@pytest.mark.parametrize("rate", [-0.1, 1.5])
def test_a_rate_outside_zero_to_one_is_refused(rate: float) -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        make_faults(["single_quotes"], rate)


def test_every_kind_is_one_short_line() -> None:
    assert all(k.isidentifier() and k.islower() for k in FAULT_KINDS)
    assert all(text and "\n" not in text for text in FAULT_KINDS.values())
