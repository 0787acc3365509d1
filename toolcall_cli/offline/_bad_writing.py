"""Faults in how the model writes its calls: JSON real parsers must repair, calls framed
wrongly, a broken call in a batch, a reply cut off, stream chunks that split the tags."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import cast

from toolcall_cli.offline._model import TEXT_ONLY, FaultBase, FaultContext, asks_in_chinese
from toolcall_cli.offline._request import UNPARSED_RE, CallFormat, Decision, read_object
from toolcall_cli.wire.completions import AssistantOutput

_TOKEN_RE = re.compile(r""""(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|[^"']+|["']""", re.S)


def tokens(text: str) -> Iterator[str]:
    """Strings (either quote) and the runs between them, for JSON this module wrote."""
    return (m.group() for m in _TOKEN_RE.finditer(text))


def is_string(token: str) -> bool:
    return len(token) >= 2 and token[0] in "\"'" and token[-1] == token[0]


def json_end(text: str, start: int) -> int:
    """Where the JSON value starting at `start` ends (or the end of the text)."""
    depth = 0
    position = start
    for token in tokens(text[start:]):
        if not is_string(token):
            for offset, char in enumerate(token):
                depth += char in "{["
                depth -= char in "}]"
                if depth == 0 and char in "}]":
                    return position + offset + 1
        position += len(token)
    return len(text)


def call_regions(content: str, fmt: CallFormat) -> list[tuple[int, int]]:
    """(start, end) of the JSON of each tagged call in text-protocol content."""
    regions: list[tuple[int, int]] = []
    found = content.find(fmt.open_tag)
    while found >= 0:
        start = found + len(fmt.open_tag)
        end = json_end(content, start)
        regions.append((start, end))
        found = content.find(fmt.open_tag, end)
    return regions


def is_call_output(output: AssistantOutput, fmt: CallFormat) -> bool:
    if fmt.shape == "native":
        return bool(output.tool_calls)
    content = output.content or ""
    if fmt.shape == "json":
        payload = read_object(content)[0]
        return payload is not None and "name" in payload
    return fmt.open_tag in content


class JsonStyleFault(FaultBase):
    """Writes the call JSON carelessly: in tags (text), in each `arguments` string (native), or
    the whole reply (json). json-repair restores it; the parsed call is marked repaired. Its kind
    is the quirk `written_json` writes: `{'a': 'b'}`, `{"a": 1,}`, `{a: 1}`. Shapes: all."""

    def alter_decision(self, decision: Decision, context: FaultContext) -> Decision:
        if not self.fires(context, bool(decision.calls)):
            return decision
        return replace(decision, style=decision.style | {self.kind})


def json_style(kind: str, quirk: str) -> type[JsonStyleFault]:
    """The JsonStyleFault for one quirk, as a class named after its kind (`SingleQuotes`)."""
    name = "".join(word.title() for word in kind.split("_"))
    about = f"writes the call's JSON with {quirk}"
    return cast(type[JsonStyleFault], type(name, (JsonStyleFault,), {"kind": kind, "about": about}))


JSON_STYLES = (
    json_style("single_quotes", "single quotes"),
    json_style("trailing_comma", "trailing commas"),
    json_style("unquoted_keys", "unquoted keys"),
)


class CodeFence(FaultBase):
    """Writes each call as a ```json fenced block with no tags, as chat-tuned models do.
    Shapes: text only. The parser takes a fenced call object as a call."""

    kind = "code_fence"
    about = "writes the call as a ```json fenced block instead of tags (text protocol)"
    shapes = TEXT_ONLY

    def alter_output(self, output: AssistantOutput, context: FaultContext) -> AssistantOutput:
        if not self.fires(context, is_call_output(output, context.format)):
            return output
        content = output.content or ""
        fmt = context.format
        for start, end in reversed(call_regions(content, fmt)):
            closing = content.find(fmt.close_tag, end)
            after = closing + len(fmt.close_tag) if closing >= 0 else end
            fenced = f"```json\n{content[start:end]}\n```"
            content = content[: start - len(fmt.open_tag)] + fenced + content[after:]
        return replace(output, content=content)


class MissingCloseTag(FaultBase):
    """Leaves out the closing tag of the last call. Shapes: text only. The parser accepts a
    complete call at the end of the reply without it."""

    kind = "missing_close_tag"
    about = "leaves out the last </tool_call> (text protocol)"
    shapes = TEXT_ONLY

    def alter_output(self, output: AssistantOutput, context: FaultContext) -> AssistantOutput:
        content = (output.content or "").rstrip()
        close_tag = context.format.close_tag
        if not self.fires(context, content.endswith(close_tag)):
            return output
        return replace(output, content=content[: -len(close_tag)])


class ProseAround(FaultBase):
    """Chatty prose before and after the calls. Shapes: text only. The parser shows the prose as
    text and still finds the calls."""

    kind = "prose_around"
    about = "wraps the call in chatty prose before and after (text protocol)"
    shapes = TEXT_ONLY

    def alter_output(self, output: AssistantOutput, context: FaultContext) -> AssistantOutput:
        if not self.fires(context, is_call_output(output, context.format)):
            return output
        if asks_in_chinese(context):
            before, after = "这个问题需要查一下。", "请稍等，工具返回结果后我马上告诉你。"
        else:
            before, after = "Good question!", "Hang on, I'll tell you as soon as the tool replies."
        return replace(output, content=f"{before} {output.content}\n\n{after}")


class BrokenBatch(FaultBase):
    """Several calls in one reply, and the last one's JSON is broken beyond repair: an unescaped
    quote inside a string (text), or arguments without their braces (native). Shapes: text and
    native (JSON mode carries one call per reply). The other calls run; the broken one comes
    back as a parse error and is made again."""

    kind = "broken_batch"
    about = "makes several calls where one has broken JSON"
    shapes = frozenset({"text", "native"})
    reported_as = UNPARSED_RE

    def alter_output(self, output: AssistantOutput, context: FaultContext) -> AssistantOutput:
        if context.format.shape == "native":
            last = output.tool_calls[-1] if output.tool_calls else None
            several = len(output.tool_calls) > 1 and last is not None and last.arguments != "{}"
            if last is None or not self.fires(context, several):
                return output
            broken = replace(last, arguments=last.arguments.strip()[1:-1])
            return replace(output, tool_calls=(*output.tool_calls[:-1], broken))
        content = output.content or ""
        regions = call_regions(content, context.format)
        if not self.fires(context, len(regions) > 1):
            return output
        start, end = regions[-1]
        return replace(
            output, content=content[:start] + unescaped_quote(content[start:end]) + content[end:]
        )

    def had_opportunity(self, context: FaultContext) -> bool:
        return any(len(turn) > 1 for turn in context.conversation.turns)


def unescaped_quote(call_json: str) -> str:
    """The last string value with a bare quote inside it: `"上"海"`."""
    parts = list(tokens(call_json))
    values = [
        i
        for i, token in enumerate(parts)
        if is_string(token) and not (i + 1 < len(parts) and parts[i + 1].lstrip().startswith(":"))
    ]
    if not values:
        return call_json + '"'
    i = values[-1]
    token = parts[i]
    quote, body = token[0], token[1:-1]
    middle = max(1, len(body) // 2)
    parts[i] = f"{quote}{body[:middle]}{quote}{body[middle:]}{quote}"
    return "".join(parts)


class Truncated(FaultBase):
    """The reply stops inside the last call, as when max_tokens runs out (finish_reason
    "length"). Shapes: all. Text: the parser reports a truncated call; native and json: what the
    parser makes of the cut JSON is its policy (see the tests)."""

    kind = "truncated"
    about = "the reply is cut off inside a call (finish_reason length)"
    reported_as = UNPARSED_RE

    def alter_output(self, output: AssistantOutput, context: FaultContext) -> AssistantOutput:
        if not self.fires(context, is_call_output(output, context.format)):
            return output
        rng = self.rng(context)
        if context.format.shape == "native":
            last = output.tool_calls[-1]
            cut = replace(last, arguments=cut_inside(last.arguments, 0, len(last.arguments), rng))
            return replace(
                output, tool_calls=(*output.tool_calls[:-1], cut), finish_reason="length"
            )
        content = output.content or ""
        json_mode = context.format.shape == "json"
        start, end = (0, len(content)) if json_mode else call_regions(content, context.format)[-1]
        return replace(output, content=cut_inside(content, start, end, rng), finish_reason="length")


def cut_inside(text: str, start: int, end: int, rng: random.Random) -> str:
    """`text` cut strictly inside text[start:end], keeping at least one character of it."""
    if end - start < 2:
        return text[:start]
    return text[: rng.randint(start + 1, end - 1)]


def tag_cuts(tag: str) -> list[int]:
    """Offsets inside a tag where a chunk may end: after `<` (and `</`), mid-name, before `>`."""
    slash = int(tag.startswith("</"))
    return sorted({1, 1 + slash, len(tag) // 2 + slash, len(tag) - 1})


class SplitTags(FaultBase):
    """Streams chunks that end inside `<tool_call>` and `</tool_call>` on purpose. Shapes: text,
    streamed requests only. The streaming parser must put each tag back together."""

    kind = "split_tags"
    about = "streams chunks that split <tool_call> / </tool_call> tags on purpose"
    shapes = TEXT_ONLY

    def alter_output(self, output: AssistantOutput, context: FaultContext) -> AssistantOutput:
        content = output.content or ""
        fmt = context.format
        if not self.fires(context, context.streaming and fmt.open_tag in content):
            return output
        rng = self.rng(context)
        cuts = list(output.cuts)
        for tag in (fmt.open_tag, fmt.close_tag):
            offsets = tag_cuts(tag)
            for found in re.finditer(re.escape(tag), content):
                chosen = rng.sample(offsets, rng.randint(1, len(offsets)))
                cuts += [found.start() + offset for offset in chosen]
        return replace(output, cuts=tuple(sorted(set(cuts))))


WRITING = (*JSON_STYLES, CodeFence, MissingCloseTag, ProseAround)
CUTTING = (BrokenBatch, Truncated, SplitTags)
