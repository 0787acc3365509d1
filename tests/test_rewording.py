"""The rewording experiment, as a test: does an error tell a model what it needs to fix its call?

The test partner (models/_partner.py) remembers no plan: it repairs a call only from what the
error's text names, its own call as the conversation shows it, and the question. For every fault
with an error to read, it recovers when the errors say it as toolcall says it today, and when
every sentence is reworded (the same information, other words); it fails when every error is
"Error: the call failed.". So the recovery comes from what the errors carry, not their words."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from toolcall_cli import feedback
from toolcall_cli.events import Event, FedBack, FinalAnswer, RunFinished, ToolFinished
from toolcall_cli.feedback import TEMPLATES, Problem, Wording, template_fields
from toolcall_cli.loop import Limits, run
from toolcall_cli.models._partner import Partner, PartnerCall
from toolcall_cli.strategies import get_strategy
from toolcall_cli.tools.loader import bundled_tools_dir, load_tools

REGISTRY = load_tools([bundled_tools_dir()]).registry
STRATEGIES = {
    "regex": lambda: get_strategy("regex"),
    "schema": lambda: get_strategy("schema", schema_mode="tools"),
    "schema_json": lambda: get_strategy("schema", schema_mode="json"),
    "stream_native": lambda: get_strategy("stream", stream_mode="native"),
}

REWORDED: dict[str, str] = {
    "unknown_tool": "There is no tool called `{tool}`.",
    "no_tool_named": "Your call has no tool name in it.",
    "tool_name_too_long": "No tool is named `{tool}`: yours is {given} long, a name has at most "
    "{detail}.",
    "closest_tool": "The nearest name is `{closest}`.",
    "tools_available": "You can call: {allowed}.",
    "no_tools": "You have no tools.",
    "not_a_tool": "`{tool}` names an earlier call; the tools you have are {allowed}.",
    "not_an_object": "`{tool}` takes an object of named arguments, and you sent {given}.",
    "not_text": "In the call of `{tool}`, `{argument}` holds {given}: a broken character.",
    "invalid_arguments": "The arguments you gave `{tool}` do not fit it:",
    "fix_and_retry": "Send the call of `{tool}` again once they are right.",
    "whole_arguments": "the arguments",
    "missing_argument": "`{argument}` is needed ({allowed}) and you left it out",
    "unexpected_argument": "{given} is none of its parameters ({allowed}); leave it out",
    "misnamed_argument": "{given} is none of its parameters ({allowed}); `{closest}` is the one "
    "nearest to it",
    "no_arguments": "it takes none",
    "none_listed": "nothing",
    "wrong_type": "{where} holds {given}, where {allowed} is wanted",
    "not_allowed": "{where} holds {given}, which is not allowed: take {allowed}",
    "no_option_fits": "{where} holds {given}, but only {allowed} will do",
    "invalid_value": "{where} is wrong: {detail}",
    "unlisted": "and {given} problems beyond these",
    "schema_unusable": "This tool's schema is broken ({detail}); nothing ran.",
    "unchecked": "Checking the arguments of `{tool}` took past {detail}; nothing ran.",
    "unparseable_call": "Nothing ran: what you wrote for a call ({given}) is no JSON that can "
    "be read. Write the whole call again.",
    "ungrounded": "Refused: {detail}",
    "written_back": "`{given}` came back from {tool} before; a call does not take its own result.",
    "echoed_result": "`{given}` is a result you have already.",
    "withdrawn": "No more tools in this run.",
    "permission": "`{tool}` needs the {given} level; this session stops at {allowed}.",
    "rate_limited": "`{tool}` may run {given} times a minute; wait {detail} s.",
    "declined": "Declined ({detail}).",
    "nobody_to_ask": "Nobody could approve this dangerous call, so it did not run.",
    "user_declined": "The user said no to `{tool}`.",
    "quoted_declined": "The user said no to `{tool}`, taken from {given}.",
    "from_result": "This call came from the result of {given}; without approval it did not run.",
    "skipped_by_user": "The user skipped this call.",
    "skipped": "This call waited for {given}, which failed ({detail}).",
    "dependency_error": "The calls' order cannot work: {detail}.",
    "tool_error": "The tool failed: {detail}",
    "tool_timeout": "`{tool}` ran out of time ({detail}).",
    "out_of_time": "The run ended before this call did.",
    "cancelled": "The user stopped this call.",
    "stopped_at_time_limit": "The run's time ran out while this call ran.",
    "reply_failed": "Your reply failed, so this call was dropped.",
    "repeated_call": "Same arguments as before, so here is the same result of {tool}.",
    "same_call_in_reply": "This repeats a call of the same reply: its result.",
    "result_cut": "(only {shown} of {total} characters)",
    "last_round": "No more tool rounds.",
    "dropped_calls": "{dropped} of your {total} calls did not run (at most {cap} a reply).",
    "no_progress": "{n} rounds got nowhere.",
    "answer_after_repeats": "{calls} gave what you had.",
    "answer_after_failed_repeats": "{calls} failed again just as before.",
    "not_an_answer": "No answer there ({why}).",
    "reply_not_read": "Your server found no call it could read in what you wrote ({why}).",
    "how_to_call": "Call a tool by its own name ({offered}), its arguments one JSON object.",
    "no_tool_now": "No tools now.",
    "the_question": "You were asked: {question}\nAnswer {how}.",
    "or_call_a_tool": "or use a tool",
    "with_what_you_have": "from what you know, and name what you could not find",
    "with_the_results": "from those results",
}


class Blank(Wording):
    """Every error says only that the call failed."""

    def text(self, problems: Sequence[Problem]) -> str:
        return "the call failed."


def test_the_rewording_says_every_message_otherwise_with_the_same_fields() -> None:
    assert set(REWORDED) == set(TEMPLATES)
    for key, template in TEMPLATES.items():
        assert REWORDED[key] != template, key
        assert template_fields(REWORDED[key]) <= template_fields(template) | {"given"}, key


@dataclass(frozen=True)
class Case:
    question: str
    first: tuple[PartnerCall, ...]
    facts: tuple[str, ...]
    """What the answer says once the calls are put right."""
    strategies: tuple[str, ...] = tuple(STRATEGIES)


SUM = "What's 12*5+3?"
CASES: dict[str, Case] = {
    "unknown_tool": Case(SUM, (PartnerCall("calculate_tool", {"expression": "12*5+3"}),), ("63",)),
    "missing_arg": Case('Work out "12*5+3", please.', (PartnerCall("calculate"),), ("63",)),
    **{
        f"wrong_param-{wrong}": Case(
            "北京今天天气怎么样？",
            (PartnerCall("get_weather", {wrong: "北京"}),),
            ("北京", "temp_c"),
        )
        for wrong in ("ciity", "City", "weather_city", "town")
    },
    "wrong_type": Case(
        "25°C 是多少华氏度？",
        (
            PartnerCall(
                "convert_units", {"value": "25 degrees", "from_unit": "°C", "to_unit": "°F"}
            ),
        ),
        ("77",),
    ),
    "not_allowed": Case(
        "What's the weather in Beijing tomorrow?",
        (PartnerCall("get_weather", {"city": "Beijing", "day": "tmrw"}),),
        ("tomorrow",),
    ),
    "truncated": Case(SUM, (PartnerCall("calculate", '{"expression": "12*5', cut=True),), ("63",)),
    "broken_batch": Case(
        "What are 12*5+3 and 7*8?",
        (
            PartnerCall("calculate", {"expression": "12*5+3"}),
            PartnerCall("calculate", '{"expression": "7"*8"}'),
        ),
        ("63", "56"),
        strategies=("regex", "schema", "stream_native"),  # JSON mode has one call a reply
    ),
}


def runs() -> Iterator[object]:
    for kind, case in CASES.items():
        for strategy in case.strategies:
            yield pytest.param(kind, strategy, id=f"{kind}-{strategy}")


def events_of(kind: str, strategy: str) -> list[Event]:
    case = CASES[kind]
    return list(
        run(
            case.question,
            model=Partner(case.first),
            strategy=STRATEGIES[strategy](),
            registry=REGISTRY,
            history=[],
            limits=Limits(),
        )
    )


def recovered(events: list[Event], facts: tuple[str, ...]) -> bool:
    """An error came back, the call was put right, and the answer holds what it found."""
    results = [e.result for e in events if isinstance(e, ToolFinished)]
    answers = [e.text for e in events if isinstance(e, FinalAnswer)]
    failed_first = any(not r.ok for r in results) or any(e.kind == "parse_error" for e in events)
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    return (
        failed_first
        and finished.stop_reason == "answered"
        and bool(answers)
        and all(fact in answers[-1] for fact in facts)
    )


@pytest.mark.parametrize(("kind", "strategy"), list(runs()))
def test_the_partner_recovers_from_todays_errors(kind: str, strategy: str) -> None:
    events = events_of(kind, strategy)
    assert recovered(events, CASES[kind].facts), [e.kind for e in events]


@pytest.mark.parametrize(("kind", "strategy"), list(runs()))
def test_the_partner_recovers_from_reworded_errors(
    kind: str, strategy: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(feedback, "WORDING", Wording(REWORDED))
    events = events_of(kind, strategy)
    told = fed_back(events)
    assert "Error: " in told
    assert [piece for piece in fragments(TEMPLATES) if piece in told] == []
    assert recovered(events, CASES[kind].facts), [e.kind for e in events]


@pytest.mark.parametrize(("kind", "strategy"), list(runs()))
def test_the_partner_fails_when_the_errors_say_nothing(
    kind: str, strategy: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(feedback, "WORDING", Blank())
    events = events_of(kind, strategy)
    told = fed_back(events)
    assert told.count("Error: ") == told.count("Error: the call failed.") > 0, told
    assert not recovered(events, CASES[kind].facts), [e.kind for e in events]


def test_an_extra_argument_has_no_error_to_read_it_is_left_out() -> None:
    """extra_arg is no case above: the engine runs the call without the argument its tool does
    not take, and says so, so there is no error to recover from."""
    events = list(
        run(
            "北京今天天气怎么样？",
            model=Partner((PartnerCall("get_weather", {"city": "北京", "verbose": True}),)),
            strategy=STRATEGIES["regex"](),
            registry=REGISTRY,
            history=[],
            limits=Limits(),
        )
    )
    [result] = [e.result for e in events if isinstance(e, ToolFinished)]
    assert result.ok and "temp_c" in result.content
    assert "verbose" in fed_back(events)


def fed_back(events: list[Event]) -> str:
    """Everything the model was told of its calls' results."""
    messages = [m for e in events if isinstance(e, FedBack) for m in e.messages]
    return "\n".join(str(m.get("content")) for m in messages)


def fragments(templates: dict[str, str]) -> set[str]:
    """The fixed pieces of the templates, long enough to be toolcall's own words (not a word
    any sentence has)."""
    pieces = {
        piece.strip()
        for template in templates.values()
        for piece in template.replace("{", "\0{").replace("}", "}\0").split("\0")
        if not piece.startswith("{")
    }
    return {piece for piece in pieces if len(piece) >= 12}


def strings_in(path: Path) -> str:
    """Every string a module's code holds (its docstrings aside), lowercase."""
    tree = ast.parse(path.read_text())
    documented = [n.body[0] for n in ast.walk(tree) if isinstance(n, DOCUMENTED) and n.body]
    docstrings = {id(d.value) for d in documented if isinstance(d, ast.Expr)}
    found = [
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and id(n) not in docstrings
    ]
    return "\n".join(s.lower() for s in found if isinstance(s, str))


DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
OWN_WORDS = ("did you mean", "unknown tool", "must be one of", "is not allowed", "timed out")


def test_neither_model_looks_for_toolcalls_own_words() -> None:
    """The offline model, the partner and the reader they share hold no piece of toolcall's
    sentences: they read what an error names (tools, parameters, values, types), not its words."""
    package = Path(feedback.__file__).parent
    modules = [*sorted((package / "offline").glob("*.py")), package / "models" / "_partner.py"]
    for path in [*modules, package / "models" / "_conversation.py"]:
        strings = strings_in(path)
        pieces = [*(p.lower() for p in fragments(TEMPLATES)), *OWN_WORDS]
        assert [p for p in pieces if p in strings] == [], path.name


def test_a_problem_reworded_keeps_what_it_names() -> None:
    problem = Problem(
        "misnamed_argument", "get_weather", "ciity", "`ciity`", ("city", "day"), "city"
    )
    said = Wording(REWORDED).text([problem])
    assert all(name in said for name in ("get_weather", "ciity", "city", "day"))
    assert "did you mean" not in said.lower()
