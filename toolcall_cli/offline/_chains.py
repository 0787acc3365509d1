"""One reply for a question that chains two tools (--dag): "tomorrow's high in Beijing, in
Fahrenheit" is get_weather with a name, then convert_units with a placeholder for the field of
its result that holds the high. The field is the one the tool's description says it returns;
a tool that does not say is called alone, and its result converted in the next round."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from toolcall_cli.messages import ToolSpec
from toolcall_cli.offline._planner import Measure, conversion_call, converter_tool, meant
from toolcall_cli.offline._question import Reading
from toolcall_cli.offline._request import PlannedCall
from toolcall_cli.offline._words import split_identifier, unit_of_field

_FIELD_RE = re.compile(r"(?<![\w.])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?![\w])")


def described_measures(spec: ToolSpec) -> list[Measure]:
    """The measured fields a tool's description says its result has (`temp_c`, `high_c`), as a
    model reads "Returns JSON with city, temp_c, high_c ..."; the value is not known yet."""
    fields = dict.fromkeys(_FIELD_RE.findall(spec.description))
    return [Measure(0, unit, key) for key in fields if (unit := unit_of_field(key))]


def chained_calls(
    calls: Sequence[PlannedCall],
    reading: Reading,
    tools: Sequence[ToolSpec],
) -> tuple[PlannedCall, ...]:
    """The question's calls with the conversions of their results that it asks for, all in one
    reply; () when nothing chains (no converter, no unit asked, no field known)."""
    converter = converter_tool(tools)
    if converter is None or not reading.units:
        return ()
    by_name = {spec.name: spec for spec in tools}
    taken: set[str] = set()
    firsts: list[PlannedCall] = []
    seconds: list[PlannedCall] = []
    for call in calls:
        spec = by_name.get(call.name)
        measures = described_measures(spec) if spec and spec is not converter else []
        have = {m.unit for m in measures}
        wanted = [u for u in dict.fromkeys(reading.units) if u not in have]
        sources = [(t, m) for t in wanted for m in meant(measures, t, reading.extremes)]
        if not sources:
            firsts.append(call)
            continue
        ref = fresh_ref(call.name, taken)
        firsts.append(replace(call, ref=ref))
        for target, measure in sources:
            value = "{{" + f"{ref}.{measure.key}" + "}}"  # the --dag prompt's placeholder
            second = conversion_call(converter, replace(measure, value=value), target)
            seconds.append(replace(second, ref=fresh_ref(converter.name, taken), depends_on=(ref,)))
    return (*firsts, *seconds) if seconds else ()


def fresh_ref(tool: str, taken: set[str]) -> str:
    """A short name for a call, unique in the reply: `weather`, `weather2`, `units`."""
    words = split_identifier(tool)
    base = words[-1] if words else "call"
    ref = base
    number = 1
    while ref in taken:
        number += 1
        ref = f"{base}{number}"
    taken.add(ref)
    return ref
