"""Faults for the offline model: on request it misbehaves the way real models do, so that each of
the engine's recovery paths can be seen (`--faults single_quotes,wrong_param --fault-rate 0.5`).

Which (fault, wire shape) pairs apply: "text" is the tag protocol (regex, stream tags), "native"
is `tool_calls` (schema tools, stream native), "json" is JSON mode (schema json). Not applied:
- prose_around, code_fence, missing_close_tag: text only. In native mode prose next to
  `tool_calls` is normal, and in JSON mode the server's grammar allows nothing around the object.
- split_tags: text shape, streamed requests only (there are no tags in the other shapes, and a
  non-streamed reply is one piece).
- broken_batch: text and native only; JSON mode carries one call per reply.
- every other kind applies to all three shapes.

How often: a fault fires with probability `rate` on its first opportunity in a conversation (for
most kinds the first reply that makes calls). When the engine reports the mistake back (an error
result that says how to fix it), the model corrects itself with probability 0.8; otherwise it
makes the same mistake once more, never a third time. A mistake the engine fixes silently
(json-repair, argument coercion) is made once. All draws come from the request's digest, so a
seed and a request always give the same reply.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from toolcall_cli.offline._bad_writing import (
    BrokenBatch,
    CodeFence,
    MissingCloseTag,
    ProseAround,
    SingleQuotes,
    SplitTags,
    TrailingComma,
    Truncated,
    UnquotedKeys,
)
from toolcall_cli.offline._model import FaultBase
from toolcall_cli.offline._wrong_calls import (
    ExtraArg,
    MissingArg,
    NoTool,
    RepeatCall,
    UnknownTool,
    WrongParam,
    WrongType,
)

FAULT_KINDS: dict[str, str] = {
    "no_tool": "硬答: answers from 'memory' without calling the tool it needs (undetectable)",
    "unknown_tool": "calls a tool name that does not exist but is close to a real one",
    "wrong_param": "uses a wrong argument name (City, ciity or weather_city instead of city)",
    "missing_arg": "leaves a required argument out",
    "extra_arg": "adds an argument the tool does not take",
    "wrong_type": 'sends a number or boolean as a string ("5" for 5)',
    "repeat_call": "calls the same tool with the same arguments again after it has the result",
    "single_quotes": "writes the call's JSON with single quotes",
    "trailing_comma": "writes the call's JSON with trailing commas",
    "unquoted_keys": "writes the call's JSON with unquoted keys",
    "code_fence": "writes the call as a ```json fenced block instead of tags (text protocol)",
    "missing_close_tag": "leaves out the last </tool_call> (text protocol)",
    "prose_around": "wraps the call in chatty prose before and after (text protocol)",
    "broken_batch": "makes several calls where one has broken JSON",
    "truncated": "the reply is cut off inside a call (finish_reason length)",
    "split_tags": "streams chunks that split <tool_call> / </tool_call> tags on purpose",
}
"""Kind name (as `--faults` takes it) → one line. The order is the order faults are applied:
what the model decides, then how the JSON is written, then framing, cutting and streaming."""


class UnknownFault(ValueError):
    """A fault name that is not one of FAULT_KINDS."""


def make_faults(names: Sequence[str], rate: float = 1.0) -> list[FaultBase]:
    """The faults called `names` (a name may also be a comma-separated list), in the order they
    apply. `rate` is the chance that each fires on a turn where it can."""
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"fault rate must be between 0 and 1, got {rate:g}")
    wanted = [n.strip() for name in names for n in name.split(",") if n.strip()]
    unknown = [n for n in wanted if n not in FAULT_KINDS]
    if unknown:
        raise UnknownFault(
            f"unknown fault {', '.join(map(repr, unknown))}; choose from {', '.join(FAULT_KINDS)}"
        )
    return [_FAULTS[kind](rate) for kind in FAULT_KINDS if kind in wanted]


_FAULTS: dict[str, Callable[[float], FaultBase]] = {
    cls.kind: cls
    for cls in (
        NoTool,
        UnknownTool,
        WrongParam,
        MissingArg,
        ExtraArg,
        WrongType,
        RepeatCall,
        SingleQuotes,
        TrailingComma,
        UnquotedKeys,
        CodeFence,
        MissingCloseTag,
        ProseAround,
        BrokenBatch,
        Truncated,
        SplitTags,
    )
}
