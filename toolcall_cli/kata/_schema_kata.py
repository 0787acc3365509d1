"""The battery of kata schema: `build_schema(tools)` judged by what its schema accepts and
rejects (and by the offline model answering under it), `validate_call(tools, call)` by the
arguments it coerces and the field errors it reports - for calls written here and for the
offline model's wrong calls in JSON mode."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped, unused-ignore]

from toolcall_cli.kata._battery import Battery, Case, Solution, Verdict, canonical, shown
from toolcall_cli.kata._offline import FAULT_CATEGORY, bundled_tools, json_mode_reply, kinds_for
from toolcall_cli.messages import ToolSpec
from toolcall_cli.strategies.schema import answer_or_call_schema
from toolcall_cli.tools.coerce import coerce_arguments
from toolcall_cli.tools.validation import validator as schema_validator

Tool = dict[str, Any]

FLIGHTS: Tool = {
    "name": "search_flights",
    "description": "Find flights between two cities.",
    "parameters": {
        "type": "object",
        "properties": {
            "origin": {"type": "string"},
            "destination": {"type": "string"},
            "passengers": {"type": "integer", "minimum": 1, "maximum": 9},
            "nonstop": {"type": "boolean"},
            "cabin": {"type": "string", "enum": ["economy", "business", "first"]},
            "max_price": {"type": "number", "minimum": 0},
            "dates": {"type": "array", "items": {"type": "string"}},
            "stops": {"enum": [0, 1, 2]},
        },
        "required": ["origin", "destination"],
        "additionalProperties": False,
    },
}


def tool_dicts() -> list[Tool]:
    """The tools every case offers: toolcall's bundled ones and a flight search with every
    keyword the kata names."""
    bundled = [as_tool(spec) for spec in bundled_tools().specs()]
    return [*bundled, FLIGHTS]


def as_tool(spec: ToolSpec) -> Tool:
    return {"name": spec.name, "description": spec.description, "parameters": spec.parameters}


def as_specs(tools: list[Tool]) -> list[ToolSpec]:
    return [ToolSpec(t["name"], t["description"], t["parameters"]) for t in tools]


def battery(conformance: Path | None) -> Battery:
    tools = tool_dicts()
    faults, coverage = fault_cases(tools)
    cases = [*schema_cases(tools), *round_trips(tools), *validation_cases(tools), *faults]
    note = "no real outputs apply to this kata (its inputs are tool specs and calls)"
    return Battery(tuple(cases), note, coverage)


# --- build_schema ---------------------------------------------------------------------------


def user_schema(solution: Solution, tools: list[Tool]) -> Any:
    """A validator for the user's schema, or what is wrong with it."""
    schema = solution.call("build_schema", tools)
    if not isinstance(schema, dict):
        return f"build_schema returned {shown(schema)}, not a dict"
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as error:
        return f"not a valid JSON Schema: {error.message}"
    return schema_validator(schema)  # its references resolve inside it only: nothing is fetched


def schema_case(category: str, name: str, tools: list[Tool], reply: Any, accept: bool) -> Case:
    def check(solution: Solution) -> Verdict:
        expected = "accepted" if accept else "rejected"
        validator = user_schema(solution, tools)
        if isinstance(validator, str):
            return Verdict(False, f"{expected}: {shown(reply)}", validator)
        got = "accepted" if validator.is_valid(reply) else "rejected"
        return Verdict(got == expected, f"{expected}: {shown(reply)}", got)

    return Case(category, "built-in", name, check)


def shape(solution: Solution, tools: list[Tool]) -> Verdict:
    expected = 'a valid JSON Schema with "anyOf" (or "oneOf") at the top'
    validator = user_schema(solution, tools)
    if isinstance(validator, str):
        return Verdict(False, expected, validator)
    keys = sorted(k for k in ("anyOf", "oneOf") if isinstance(validator.schema.get(k), list))
    return Verdict(bool(keys), expected, f"top-level keys {sorted(validator.schema)}")


def schema_cases(tools: list[Tool]) -> list[Case]:
    def call(name: str, **arguments: Any) -> dict[str, Any]:
        return {"name": name, "arguments": arguments}

    trip = {"origin": "Paris", "destination": "Tokyo"}
    accepted = [
        ("the final answer", {"answer": "Sunny, 21°C."}),
        ("a call with its required argument", call("get_weather", city="Paris")),
        (
            "a call with an optional enum argument",
            call("get_weather", city="Paris", day="tomorrow"),
        ),
        ("a call with a number", call("convert_units", value=5, from_unit="km", to_unit="mi")),
        ("a call with no arguments", call("get_time")),
        (
            "a call with every kind of argument",
            call(
                "search_flights",
                **trip,
                passengers=2,
                nonstop=True,
                cabin="first",
                max_price=900.5,
                dates=["2025-05-01"],
                stops=1,
            ),
        ),
    ]
    rejected = [
        ("an unknown tool", call("get_wether", city="Paris")),
        ("a missing required argument", call("get_weather")),
        ("an argument the tool does not take", call("get_weather", city="Paris", units="metric")),
        (
            "a string where a number goes",
            call("convert_units", value="5", from_unit="km", to_unit="mi"),
        ),
        ("a value outside the enum", call("get_weather", city="Paris", day="yesterday")),
        ("a value over the maximum", call("search_flights", **trip, passengers=12)),
        ("a call without arguments", {"name": "get_time"}),
        ("a call and an answer at once", {**call("get_time"), "answer": "noon"}),
        ("an answer that is not text", {"answer": 42}),
        ("neither a call nor an answer", {"reply": "hello"}),
    ]
    return [
        Case(
            "schema shape",
            "built-in",
            "a valid schema, a union at the top",
            lambda solution: shape(solution, tools),
        ),
        *(schema_case("schema accepts", name, tools, reply, True) for name, reply in accepted),
        *(schema_case("schema rejects", name, tools, reply, False) for name, reply in rejected),
    ]


ROUND_TRIP_QUESTIONS = (
    "What's the weather in Paris?",
    "Convert 5 km to miles",
    "北京明天天气怎么样？",
)


def round_trips(tools: list[Tool]) -> list[Case]:
    """The offline model answers under the user's schema; its reply must match the schema."""
    specs = as_specs(tools)

    def make(question: str) -> Callable[[Solution], Verdict]:
        def check(solution: Solution) -> Verdict:
            validator = user_schema(solution, tools)
            if isinstance(validator, str):
                return Verdict(False, "the model's reply matches the schema", validator)
            reply = json.loads(json_mode_reply(None, question, validator.schema, specs))
            found = "matches" if validator.is_valid(reply) else "does not match"
            return Verdict(
                found == "matches",
                "the reply matches the schema",
                f"the reply {shown(reply)} {found}",
            )

        return check

    return [
        Case("model round trip", "built-in", f"the offline model answers {q!r} under it", make(q))
        for q in ROUND_TRIP_QUESTIONS
    ]


# --- validate_call --------------------------------------------------------------------------

Errors = dict[str, list[str]]
"""Field → the error kinds acceptable for it (a value may fail several keywords at once; any
one of them is a right report)."""


def judge_call(
    solution: Solution, tools: list[Tool], call: dict[str, Any], arguments: Any, errors: Errors
) -> Verdict:
    expected = {"arguments": arguments, "errors": errors}
    result = solution.call("validate_call", tools, call)
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], list)):
        return Verdict(False, shown(expected), f"not a pair (arguments, errors): {shown(result)}")
    got_arguments, got_errors = result
    unreadable = [
        e
        for e in got_errors
        if not (isinstance(e, dict) and isinstance(e.get("message"), str) and e["message"].strip())
    ]
    if unreadable:
        return Verdict(
            False,
            shown(expected),
            f"errors need a field, an error and a message: {shown(unreadable)}",
        )
    reported: dict[str, list[str]] = {}
    for error in got_errors:
        reported.setdefault(str(error.get("field")), []).append(str(error.get("error")))
    right = (
        canonical(got_arguments) == canonical(arguments)
        and sorted(reported) == sorted(errors)
        and all(set(kinds) <= set(errors[field]) for field, kinds in reported.items())
    )
    return Verdict(right, shown(expected), shown({"arguments": got_arguments, "errors": reported}))


TRIP = {"origin": "Paris", "destination": "Tokyo"}

Validation = tuple[str, str, dict[str, Any], Any, Errors]
"""(category, name, the call, its arguments after coercion, the errors)."""


def flights(arguments: Any) -> dict[str, Any]:
    return {"name": "search_flights", "arguments": arguments}


def trip(
    category: str, name: str, given: dict[str, Any], fixed: Any = None, **errors: list[str]
) -> Validation:
    """A search_flights call from Paris to Tokyo with `given` on top; `fixed`: what coercion
    makes of `given` (by default, `given` as it is)."""
    fixed = given if fixed is None else fixed
    return category, name, flights({**TRIP, **given}), {**TRIP, **fixed}, errors


VALIDATION: tuple[Validation, ...] = (
    trip("coercion", "valid as it is", {"passengers": 2}),
    trip("coercion", 'integer from "2"', {"passengers": "2"}, {"passengers": 2}),
    trip("coercion", "integer from 2.0", {"passengers": 2.0}, {"passengers": 2}),
    trip("coercion", 'number from "199.5"', {"max_price": "199.5"}, {"max_price": 199.5}),
    trip("coercion", 'boolean from "False"', {"nonstop": "False"}, {"nonstop": False}),
    trip("coercion", 'enum from "Business"', {"cabin": "Business"}, {"cabin": "business"}),
    trip("coercion", 'enum number from "1"', {"stops": "1"}, {"stops": 1}),
    trip("coercion", "string from a number", {"origin": 600519}, {"origin": "600519"}),
    trip("coercion", "array from a lone value", {"dates": "2025-05-01"}, {"dates": ["2025-05-01"]}),
    trip(
        "coercion",
        "array from a JSON string",
        {"dates": '["2025-05-01", "2025-05-03"]'},
        {"dates": ["2025-05-01", "2025-05-03"]},
    ),
    trip("type errors", "2.5 is not an integer", {"passengers": 2.5}, passengers=["type"]),
    trip("type errors", '"yes" is not a boolean', {"nonstop": "yes"}, nonstop=["type"]),
    trip("type errors", "true is not a number", {"passengers": True}, passengers=["type"]),
    trip("type errors", '"cheap" is not a number', {"max_price": "cheap"}, max_price=["type"]),
    trip("type errors", "null is not a string", {"cabin": None}, cabin=["type", "enum"]),
    trip("range", "over the maximum", {"passengers": 12}, passengers=["maximum"]),
    trip(
        "range",
        'under the minimum, after coercing "0"',
        {"passengers": "0"},
        {"passengers": 0},
        passengers=["minimum"],
    ),
    trip("enum", "not one of the enum", {"cabin": "premium"}, cabin=["enum"]),
    (
        "wrong arguments",
        "a required argument missing",
        flights({"origin": "Paris"}),
        {"origin": "Paris"},
        {"destination": ["missing"]},
    ),
    trip(
        "wrong arguments",
        "an argument the tool does not take",
        {"seat": "12A"},
        seat=["unexpected"],
    ),
    (
        "wrong arguments",
        "three problems at once",
        flights({"origin": "Paris", "passengers": 20, "pets": True}),
        {"origin": "Paris", "passengers": 20, "pets": True},
        {"destination": ["missing"], "passengers": ["maximum"], "pets": ["unexpected"]},
    ),
    (
        "unknown tool",
        "a tool that does not exist",
        {"name": "search_flight", "arguments": TRIP},
        {},
        {"name": ["unknown_tool"]},
    ),
    (
        "type errors",
        "arguments that are not an object",
        flights("Paris to Tokyo"),
        {},
        {"arguments": ["type"]},
    ),
)


def validation_cases(tools: list[Tool]) -> list[Case]:
    def make(call: dict[str, Any], arguments: Any, errors: Errors) -> Callable[[Solution], Verdict]:
        return lambda solution: judge_call(solution, tools, call, arguments, errors)

    return [
        Case(category, "built-in", name, make(call, fixed, errors))
        for category, name, call, fixed, errors in VALIDATION
    ]


# --- the offline model's wrong calls ----------------------------------------------------------

SCHEMA_CATEGORY = {**FAULT_CATEGORY, "wrong_type": "coercion"}
"""A wrong type in JSON mode is a value validate_call coerces."""
QUESTIONS = {"wrong_type": "Convert 5 km to miles"}


def expected_check(tools: list[Tool], call: dict[str, Any]) -> tuple[Any, Errors]:
    """What validate_call should give, as toolcall itself decides it: its own coercion, then
    the jsonschema library's errors, each under the kata's name for it."""
    tool = next((t for t in tools if t["name"] == call.get("name")), None)
    if tool is None:
        return {}, {"name": ["unknown_tool"]}
    fixed, _ = coerce_arguments(as_specs([tool])[0], call["arguments"])
    schema = {**tool["parameters"], "additionalProperties": False}
    errors: Errors = {}
    for error in schema_validator(schema).iter_errors(fixed):
        if error.validator == "required":
            for field in (f for f in schema.get("required", []) if f not in fixed):
                errors[field] = ["missing"]
        elif error.validator == "additionalProperties":
            for field in (f for f in fixed if f not in schema["properties"]):
                errors[field] = ["unexpected"]
        elif error.path:
            errors.setdefault(str(error.path[0]), []).append(str(error.validator))
    return fixed, errors


def fault_cases(tools: list[Tool]) -> tuple[list[Case], str]:
    """Each JSON-mode fault kind's first reply: validate_call must read it as toolcall does,
    and the user's schema must refuse a wrong call (and take an answer)."""
    specs = as_specs(tools)
    schema = answer_or_call_schema(specs)
    kinds, others = kinds_for("json")
    cases: list[Case] = []
    not_here: list[str] = []
    for kind in kinds:
        question = QUESTIONS.get(kind, "What's the weather in Paris and in Tokyo?")
        text = json_mode_reply(kind, question, schema, specs)
        try:
            reply = json.loads(text)
        except ValueError:
            reply = None
        if reply is None or text == json_mode_reply(None, question, schema, specs):
            not_here.append(kind)  # not JSON, or the fault did not fire on the first reply
            continue
        takes = schema_validator(schema).is_valid(reply)
        cases += fault_case(SCHEMA_CATEGORY.get(kind, kind), kind, reply, tools, takes)
    coverage = f"offline fault kinds: {', '.join(k for k in kinds if k not in not_here)}"
    if not_here or others:
        coverage += (
            f" (not {', '.join([*not_here, *others])}: their replies are not JSON, or they need "
            "a later turn or the text protocol; katas parse and loop meet them)"
        )
    return cases, coverage


def fault_case(
    category: str, kind: str, reply: dict[str, Any], tools: list[Tool], takes: bool
) -> list[Case]:
    """`takes`: whether toolcall's own response schema takes the reply (the user's must agree)."""
    if "answer" in reply:
        return [schema_fault(category, f"{kind}: your schema takes the answer", tools, reply, True)]
    fixed, errors = expected_check(tools, reply)
    verb = "takes" if takes else "refuses"
    return [
        Case(
            category,
            "offline faults",
            f"{kind}: validate_call reads {shown(reply)}",
            lambda solution: judge_call(solution, tools, reply, fixed, errors),
        ),
        schema_fault(category, f"{kind}: your schema {verb} it", tools, reply, takes),
    ]


def schema_fault(category: str, name: str, tools: list[Tool], reply: Any, accept: bool) -> Case:
    case = schema_case(category, name, tools, reply, accept)
    return Case(case.category, "offline faults", case.name, case.check)
