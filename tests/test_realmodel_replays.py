"""Replies Qwen2.5-0.5B wrote on llama-server (temperature 0, the bundled tools), replayed by
the scripted model: what the engine does with them now."""

from __future__ import annotations

import pytest
from test_issue24_replays import play
from test_loop import of

from toolcall_cli.events import AnswerWithoutTools, RunFinished, ToolFinished

MILES = "How many kilometres is 26.2 miles?"
CONVERTED = (
    '{"name": "convert_units", "arguments": {"value": 26.2, "from_unit": "miles", "to_unit": "km"}}'
)


@pytest.mark.parametrize(
    ("strategy", "first", "again"),
    [
        (
            "stream",
            '{"name": "calculate", "arguments": {"expression": "26.2*5", "result": 131.0}}',
            '{"name": "calculate", "arguments": {"expression": "26.2*5", "result": 131}}',
        ),
        (
            "regex",
            '{"name": "calculate", "arguments": {"expression": "26.2", "units": "miles", '
            '"result": 42.1648128}}',
            '{"name": "calculate", "arguments": {"expression": "26.2", "units": "miles", '
            '"result": 26.2}}',
        ),
    ],
)
def test_a_call_sent_again_with_only_an_argument_left_out_changed_is_a_repeat(
    strategy: str, first: str, again: str
) -> None:
    """The model wrote the result it had back into the call as an argument the tool does not
    take, its value changed (131.0, then 131): the call that runs is the same one, so it is a
    repeat, and the tools go; before, the changed extra made it a new call, run again."""
    replies = [CONVERTED, first, again, "26.2 miles is 42.16 km."]
    events, _ = play(MILES, replies, strategy=strategy)
    results = [f.result for f in of(events, ToolFinished)]
    assert [r.cached for r in results] == [False, False, True]
    (withdrawn,) = of(events, AnswerWithoutTools)
    assert withdrawn.repeated and "`calculate`" in withdrawn.message
    assert of(events, RunFinished)[0].iterations == 4
