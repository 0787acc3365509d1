"""Tool calls written as text: one incremental parser for whole replies and token streams.

Batch parsing is feeding the whole reply as one chunk; any chunking gives the same result.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from toolcall_cli.events import (
    CallForming,
    ParseError,
    ParserEvent,
    ReasoningDelta,
    TextDelta,
    ToolCallParsed,
)
from toolcall_cli.messages import ToolCall
from toolcall_cli.strategies._dependencies import call_ref, dependency_ids
from toolcall_cli.strategies._repair import JsonProblem, decode_nested, load_json
from toolcall_cli.strategies.text_prompt import CALL_CLOSE, CALL_OPEN

FORMAT_HINT = (
    f'Write each call exactly as {CALL_OPEN}{{"name": "<tool name>", "arguments": '
    f"{{<arguments as a JSON object>}}}}{CALL_CLOSE}, with double-quoted JSON."
)

# Tags real models wrap a call in. Only <tool_call> is what we ask for; the others count only
# when a JSON value follows them, so prose that mentions "<tool>" stays prose.
_WRAPPER_TAGS = ("tool_call", "tools", "tool", "response", "json", "JSON", "xml", "function_call")
_OPENER = re.compile(f"<({'|'.join(_WRAPPER_TAGS)})>")
_FUNCTION_OPENER = re.compile(r'<function=([\w.\-]{1,64})>|<function\s{1,8}name="([\w.\-]{1,64})">')
_FUNCTION_PREFIX = re.compile(
    r'<function(?:=[\w.\-]{0,64}|\s{1,8}(?:n|na|nam|name|name=|name="[\w.\-]{0,64}"?)?)?'
)
# Markers that native chat templates put before a call's JSON, with what ends it there:
# Llama 3.1's <|python_tag|> ... <|eom_id|> and Mistral's [TOOL_CALLS] [...]. Like the other
# wrappers they count only when JSON follows, and they are markup, never display text.
_MISTRAL = "[TOOL_CALLS]"
_MARKERS = {"<|python_tag|>": "<|eom_id|>", _MISTRAL: "</s>"}
# Mistral's v11+ tokenizers write each call as [TOOL_CALLS]NAME[ARGS]{...}, or with the call's
# id, [TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{...}; calls follow one another with no separator, and a
# server that drops control tokens from the text leaves [TOOL_CALLS]NAME{...}.
_MISTRAL_NAME = re.compile(r"[\w.\-]{1,64}")
_MISTRAL_PARTS = (re.compile(r"\[CALL_ID\][\w\-]{1,64}"), re.compile(r"\[ARGS\]"))
_MISTRAL_PART_STARTS = ("[CALL_ID]", "[ARGS]")
_TAG_PREFIXES = frozenset(
    f"<{name}>"[:cut] for name in _WRAPPER_TAGS for cut in range(1, len(name) + 2)
) | {marker[:cut] for marker in _MARKERS for cut in range(1, len(marker))}
_THINK_OPEN, _THINK_CLOSE = "<think>", "</think>"
_FENCE = "```"
_FENCE_LANG = re.compile(r"[\w+\-.]{0,32}")

_TEXT_SPECIAL = re.compile(r"[<{\[`]")
_TEXT_SPECIAL_CHARS = frozenset("<{[`")
_NOTHING: tuple[ParserEvent, ...] = ()
"""What feed() returns when nothing resolved: shared, as most 1-character chunks resolve nothing."""
_JSON_STRUCT = re.compile(r"[{}\[\]\"'<:,]")
_JSON_STRUCT_CHARS = frozenset("{}[]\"'<:,")
_STRING_STOP = {'"': re.compile(r'[\\"]'), "'": re.compile(r"[\\']")}
_NON_SPACE = re.compile(r"\S")
_SPACE_LIMIT = 256
_SPACE_RUN = re.compile(rf"\s{{0,{_SPACE_LIMIT + 1}}}")
# A `'` opens a string only where JSON expects a value or key, so "it's" in a broken
# call does not swallow the rest of the reply as a string.
_QUOTE_OPENERS = frozenset("{[,:")
_ARGUMENT_KEYS = ("arguments", "parameters")

_BETWEEN_VALUES = re.compile(r"\s*[,;]?\s*")
_JSON_GOES_ON = frozenset(",:\"'")
_STRAY_CLOSERS = re.compile(r"[\s}\]]*[}\]]")
_XML_FUNCTION = re.compile(r"<function=([^>\s]+)>(.*?)(?:</function>|\Z)", re.S)
_XML_PARAMETER = re.compile(r"<parameter=([^>\s]+)>\n?(.*?)\n?(?:</parameter>|\Z)", re.S)

State = Literal["start", "reasoning", "text", "code", "call", "closed"]


@dataclass(frozen=True)
class ParsedText:
    """A whole reply after parsing: display text, calls, parse errors and reasoning."""

    text: str
    calls: tuple[ToolCall, ...]
    errors: tuple[ParseError, ...]
    reasoning: str


@dataclass(frozen=True)
class _Opener:
    """A wrapper tag that may start a call: where it ends and what closes it."""

    end: int
    close: str
    name: str | None
    """The tool name when the tag carries it (`<function=NAME>`)."""
    canonical: bool


@dataclass(slots=True)
class _PendingCall:
    """A call whose text is still arriving, with the JSON-aware scan state over it."""

    tagged: bool
    """True for a call inside wrapper tags, False for a bare JSON candidate."""
    close: str = ""
    open_len: int = 0
    fixed_name: str | None = None
    fence_prefix: str = ""
    """The fence opener held back in front of the call, shown if it is no call."""
    pieces: list[str] = field(default_factory=list)
    length: int = 0
    depth: int = 0
    quote: str = ""
    stops: str = ""
    """The characters that end a plain run inside the current string: its quote and `\\`."""
    escape: bool = False
    prev: str = ""
    complete: bool = False
    """A whole JSON value has been seen (depth went back to 0)."""
    value_end: int = -1
    """Where in the call's text the first whole JSON value ends (-1 until it has)."""
    capturing: bool = False
    captured: list[str] = field(default_factory=list)
    last_string: str | None = None
    expect_name: bool = False
    name: str | None = None
    args_start: int = -1
    forming_at: int = 0
    last_shown: tuple[str | None, int] | None = None
    """What the last CallForming showed: (name, length of the arguments text)."""

    @property
    def fenced(self) -> bool:
        return bool(self.fence_prefix)

    def text(self) -> str:
        joined = "".join(self.pieces)
        self.pieces[:] = [joined]  # in place: the hot path holds this list's append
        return joined

    def looks_like_call(self) -> bool:
        return self.tagged or (self.name is not None and self.args_start >= 0)


# Scan outcomes inside a pending call.
_MORE, _STALL, _END, _IMPLICIT_END, _ABANDON = range(5)


class CallTextParser:
    """Turns model text, fed in chunks of any size, into display text, reasoning and calls.

    feed() returns the events that resolved with that chunk; close() ends the reply. After
    close(), `text`, `reasoning`, `calls` and `errors` hold the accumulated results. feed()
    returns a fresh list when events resolved, and a shared empty tuple when none did (most
    1-character chunks), so its result must not be mutated; close() returns a fresh list.
    """

    # Slots: feed() runs once per character while streaming, and slot access is faster.
    __slots__ = (
        "_call",
        "_closed",
        "_delta_cache",
        "_fence_open",
        "_held",
        "_hot_append",
        "_hot_armed",
        "_hot_left",
        "_hot_stops",
        "_hot_string_stops",
        "_next_id",
        "_out",
        "_pending_reasoning",
        "_pending_text",
        "_prefix",
        "_reasoning_parts",
        "_state",
        "_text_parts",
        "calls",
        "errors",
    )

    def __init__(self, call_id_prefix: str = "call_") -> None:
        self._prefix = call_id_prefix
        self._state: State = "start"
        self._held = ""
        self._call: _PendingCall | None = None
        self._fence_open = False
        self._closed = False
        self._next_id = 0
        self._out: list[ParserEvent] = []
        self._pending_text: list[str] = []
        self._pending_reasoning: list[str] = []
        self._text_parts: list[str] = []
        self._reasoning_parts: list[str] = []
        self._delta_cache: dict[str, TextDelta] = {}
        # The hot path: while inside a plain string of a call, a 1-character chunk not in
        # _hot_stops is appended with no other work for _hot_left chunks (see _arm/_cool).
        self._hot_stops: str | None = None
        self._hot_string_stops = ""
        self._hot_append: Callable[[str], None] = self._text_parts.append
        self._hot_left = self._hot_armed = 0
        self.calls: list[ToolCall] = []
        self.errors: list[ParseError] = []

    @property
    def text(self) -> str:
        """All display text so far: the concatenation of every TextDelta."""
        return "".join(self._text_parts)

    @property
    def reasoning(self) -> str:
        return "".join(self._reasoning_parts)

    # --- public entry points ------------------------------------------------------------------

    def feed(self, text: str) -> Sequence[ParserEvent]:
        """Consume one chunk; return the events that resolved with it."""
        # Fast paths first: nearly every chunk is plain prose or the inside of a string, and at
        # one character per chunk the general machinery would cost more than the parsing.
        if self._hot_stops is not None:
            hot = self._feed_hot(text)
            if hot is not None:
                return hot
        if self._held:
            if self._state == "call":
                if self._hold_close_tag(text):
                    return _NOTHING
            elif self._state == "text" and self._held + text in _TAG_PREFIXES:
                self._held += text  # still only the start of a wrapper tag: keep waiting
                return _NOTHING
        elif self._state == "text":
            if (text not in _TEXT_SPECIAL_CHARS) if len(text) == 1 else _plain_text(text):
                self._text_parts.append(text)
                return [self._delta_cache.get(text) or self._text_delta(text)]
        elif self._state == "call":
            taken = self._feed_call(text)
            if taken is not None:
                return taken
        return self._feed_slow(text)

    def _feed_hot(self, text: str) -> Sequence[ParserEvent] | None:
        """One character inside a plain string of a call, taken without the state machine;
        None when the chunk needs it (and the hot path is left)."""
        stops = self._hot_stops
        assert stops is not None
        if len(text) == 1 and (text not in stops or text == "\\"):
            self._hot_append(text)
            if text == "\\" and stops:
                self._hot_stops = ""  # the next character is escaped, whatever it is
            elif not stops:
                self._hot_stops = self._hot_string_stops
            self._hot_left -= 1
            if self._hot_left:
                return _NOTHING
            self._cool()
            return self._call_progress()
        self._cool()
        return None

    def _feed_call(self, text: str) -> Sequence[ParserEvent] | None:
        """A chunk inside a call's JSON, taken without the state machine; None when it needs
        the general scan."""
        call = self._call
        assert call is not None
        one_char = len(text) == 1  # one character a chunk: the common streaming case, kept fast
        fed = self._feed_call_char(call, text) if one_char else self._feed_call_run(call, text)
        if not fed:
            return None
        if call.length >= call.forming_at:
            return self._call_progress()
        if call.quote:
            self._arm()
        return _NOTHING

    def _hold_close_tag(self, text: str) -> bool:
        """Keep holding a partial close tag that the chunk extends but does not complete."""
        call = self._call
        held = self._held + text
        if call is None or len(held) >= len(call.close) or not call.close.startswith(held):
            return False
        self._held = held
        return True

    def _call_progress(self) -> list[ParserEvent]:
        call = self._call
        if call is None or call.length < call.forming_at:
            self._arm()
            return []
        self._out = []
        self._maybe_forming()
        self._arm()
        return self._out

    def _arm(self) -> None:
        """Enter the hot path when the scan sits inside a plain string of a call."""
        call = self._call
        if call is None or self._held or not call.quote or call.escape or call.capturing:
            return
        left = call.forming_at - call.length if call.looks_like_call() else 1 << 30
        if left > 1:
            self._hot_stops = self._hot_string_stops = call.stops
            self._hot_append = call.pieces.append
            self._hot_left = self._hot_armed = left

    def _cool(self) -> None:
        """Leave the hot path: account for the characters it took."""
        if self._call is not None:
            self._call.length += self._hot_armed - self._hot_left
            self._call.escape = self._hot_stops == ""
        self._hot_stops = None
        self._hot_left = self._hot_armed = 0

    def _feed_slow(self, text: str) -> list[ParserEvent]:
        if self._closed:
            raise RuntimeError("CallTextParser.feed() called after close()")
        if not text:
            return []
        self._out = []
        self._run(self._held + text if self._held else text, final=False)
        self._maybe_forming()
        self._flush()
        self._arm()
        return self._out

    def close(self) -> Sequence[ParserEvent]:
        """End of reply: flush held text and finish (or flag) a call left open."""
        if self._closed:
            return []
        if self._hot_stops is not None:
            self._cool()
        self._closed = True
        self._out = []
        held, self._held = self._held, ""
        self._run(held, final=True)
        while self._call is not None:
            rest = self._finish_at_end(self._call)
            if rest:
                self._run(rest, final=True)
        self._flush()
        self._state = "closed"
        return self._out

    def _feed_call_run(self, call: _PendingCall, text: str) -> bool:
        """Take a run of plain characters inside a string of a call; False if it is not one."""
        if not text or not call.quote or call.escape or "\\" in text or call.quote in text:
            return False
        call.pieces.append(text)
        call.length += len(text)
        if call.capturing:
            call.captured.append(text)
        return True

    def _feed_call_char(self, call: _PendingCall, c: str) -> bool:
        """The one-character version of _scan, for everything but `<` and a value's end."""
        if call.quote:
            self._char_in_string(call, c)
        elif c not in _JSON_STRUCT_CHARS:
            if not c.isspace():
                call.prev = "x"
        elif c in "}]":
            if call.depth <= 1:
                return False  # the value may be complete: the general scan decides
            call.depth -= 1
            call.prev = c
        elif c == "<" or (c == "[" and call.complete and not call.depth):
            return False  # maybe the close tag or the next call's marker: needs look-ahead
        elif not self._structure(call, c, call.length + 1):
            return False
        call.pieces.append(c)
        call.length += 1
        return True

    def _char_in_string(self, call: _PendingCall, c: str) -> None:
        quote = call.quote
        if call.capturing:
            call.captured.append(c)
        if call.escape:
            call.escape = False
        elif c == "\\":
            call.escape = True
        elif c == quote:
            call.quote = ""
            call.prev = quote
            if call.capturing:
                call.captured.pop()
                call.capturing = False
                self._string_closed(call, "".join(call.captured), quote)

    def _structure(self, call: _PendingCall, c: str, offset: int) -> bool:
        """A JSON character outside strings that opens a string, opens a container or
        separates, at `offset` in the call's text; False for any other."""
        if c == '"' or (c == "'" and call.prev in _QUOTE_OPENERS):
            call.quote = c
            call.stops = c + "\\"
            if call.depth == 1:
                call.capturing = True
                call.captured = []
        elif c in "{[":
            call.depth += 1
            call.prev = c
        elif c == ":" or c == ",":
            if call.depth == 1:
                self._key_or_comma(call, c, offset)
            call.prev = c
        elif c == "'":  # a `'` that cannot open a string here ("it's")
            call.prev = "x"
        else:
            return False
        return True

    def _text_delta(self, text: str) -> TextDelta:
        # Events are frozen, so one instance per short chunk can be shared; building a
        # dataclass per character would cost more than all the parsing.
        if len(text) > 4:
            return TextDelta(text=text)
        delta = self._delta_cache.get(text)
        if delta is None:
            delta = TextDelta(text=text)
            if len(self._delta_cache) < 4096:
                self._delta_cache[text] = delta
        return delta

    # --- the state machine ----------------------------------------------------------------------

    def _run(self, buf: str, *, final: bool) -> None:
        pos, end = 0, len(buf)
        while pos < end:
            state = self._state
            if state == "text":
                pos, stalled = self._step_text(buf, pos, final)
            elif state == "call":
                pos, stalled = self._step_call(buf, pos, final)
            elif state == "code":  # the fence that ends a code block is shown with it
                pos, stalled = self._step_until(buf, pos, final, _FENCE, self._emit, show_end=True)
            elif state == "reasoning":
                pos, stalled = self._step_until(
                    buf, pos, final, _THINK_CLOSE, self._reason, show_end=False
                )
            else:
                pos, stalled = self._step_start(buf, pos, final)
            if stalled:
                break
        self._held = buf[pos:]

    def _step_start(self, buf: str, pos: int, final: bool) -> tuple[int, bool]:
        k = _skip_space(buf, pos)
        if k is not None and buf.startswith(_THINK_OPEN, k):
            self._state = "reasoning"
            return k + len(_THINK_OPEN), False
        if k is not None and not final and _THINK_OPEN[: len(buf) - k] == buf[k:]:
            return pos, True
        self._state = "text"
        return pos, False

    def _step_until(
        self,
        buf: str,
        pos: int,
        final: bool,
        end: str,
        out: Callable[[str], None],
        *,
        show_end: bool,
    ) -> tuple[int, bool]:
        """Reasoning or a code block: its text goes to `out` until `end` closes it (a tail that
        may be the start of `end` is held back); `show_end` sends `end` to `out` as well."""
        j = buf.find(end, pos)
        if j >= 0:
            out(buf[pos : j + len(end) if show_end else j])
            self._state = "text"
            return j + len(end), False
        hold = len(buf) if final else _partial_suffix(buf, pos, end)
        out(buf[pos:hold])
        return hold, hold < len(buf)

    def _step_text(self, buf: str, pos: int, final: bool) -> tuple[int, bool]:
        m = _TEXT_SPECIAL.search(buf, pos)
        if m is None:
            self._emit(buf[pos:])
            return len(buf), False
        j = m.start()
        self._emit(buf[pos:j])
        c = buf[j]
        if c in "<[":  # a wrapper tag or [TOOL_CALLS]; a `[` that is neither may open a bare call
            nxt = self._try_tag(buf, j, final, fence_start=-1)
            if c == "[" and nxt == -1:
                nxt = self._try_bare(buf, j, final, fence_start=-1)
        elif c == "`":
            nxt = self._try_fence(buf, j, final)
        else:
            nxt = self._try_bare(buf, j, final, fence_start=-1)
        if nxt is None:
            return j, True
        if nxt < 0:  # not special after all: show the one character and move on
            self._emit(c)
            return j + 1, False
        return nxt, False

    # Each _try_* returns the position to continue from, -1 when the character is plain text,
    # or None when more characters are needed to decide.

    def _try_tag(self, buf: str, j: int, final: bool, fence_start: int) -> int | None:
        opener = _match_opener(buf, j)
        if opener is None:
            if not final and _could_open(buf, j):
                return None
            return -1
        if not opener.canonical:  # only <tool_call> opens a call whatever follows it
            if opener.close == _MARKERS[_MISTRAL]:
                named = _mistral_named(buf, opener.end, final)
                if named is None:
                    return None
                opener = named or opener
            follows = _call_json_at(buf, opener.end, final)
            if follows is not True:
                return None if follows is None else -1
        self._open_tagged(buf, j, opener, fence_start)
        return opener.end

    def _try_bare(self, buf: str, j: int, final: bool, fence_start: int) -> int | None:
        k = _skip_space(buf, j + 1)
        if buf[j] == "[" and k is not None and k < len(buf):
            if buf[k] != "{":
                return -1
            k = _skip_space(buf, k + 1)
        if k is None:
            return -1
        if k == len(buf):
            return None if not final else -1
        # A key must be quoted, except inside a code fence, where a call with unquoted keys
        # (`{name: "f", ...}`) is still clearly meant as one; if it is not a call after all, the
        # fenced text is shown unchanged.
        unquoted_key = fence_start >= 0 and (buf[k].isalpha() or buf[k] == "_")
        if buf[k] not in ('"', "'") and not unquoted_key:
            return -1
        prefix = buf[fence_start:j] if fence_start >= 0 else ""
        self._call = _PendingCall(tagged=False, fence_prefix=prefix)
        self._state = "call"
        return j

    def _try_fence(self, buf: str, j: int, final: bool) -> int | None:
        if not buf.startswith(_FENCE, j):
            if not final and _FENCE.startswith(buf[j:]):
                return None
            return -1
        if self._fence_open:  # the fence around a call closes: its marker is not text
            self._fence_open = False
            return j + len(_FENCE)
        lang = _FENCE_LANG.match(buf, j + len(_FENCE))
        lang_end = lang.end() if lang else j + len(_FENCE)
        if lang_end == len(buf) and not final:
            return None
        k = _skip_space(buf, lang_end)
        if k is None:
            return self._plain_fence(buf, j, lang_end)
        if k == len(buf):
            return None if not final else self._plain_fence(buf, j, k)
        if buf[k] == "<":
            nxt = self._try_tag(buf, k, final, fence_start=j)
        elif buf[k] in ("{", "["):
            nxt = self._try_bare(buf, k, final, fence_start=j)
        else:
            nxt = -1
        if nxt is None:
            return None
        return nxt if nxt >= 0 else self._plain_fence(buf, j, k)

    def _plain_fence(self, buf: str, j: int, k: int) -> int:
        # A fence around ordinary code: shown verbatim, calls are not looked for inside.
        self._emit(buf[j:k])
        self._state = "code"
        return k

    def _open_tagged(self, buf: str, j: int, opener: _Opener, fence_start: int) -> None:
        # The fence opener is kept with the call: dropped if it is a call, shown if it is not.
        tag = buf[j : opener.end]
        self._call = _PendingCall(
            tagged=True,
            fence_prefix=buf[fence_start:j] if fence_start >= 0 else "",
            close=opener.close,
            open_len=len(tag),
            fixed_name=opener.name,
            pieces=[tag],
            length=len(tag),
        )
        self._state = "call"

    # --- inside a call: a JSON-aware scan that never re-reads a character -----------------------

    def _step_call(self, buf: str, pos: int, final: bool) -> tuple[int, bool]:
        call = self._call
        assert call is not None
        outcome, j = self._scan(call, buf, pos, final)
        if j > pos:
            call.pieces.append(buf[pos:j])
            call.length += j - pos
        if outcome == _MORE:
            return j, False
        if outcome == _STALL:
            return j, True
        self._call = None
        self._state = "text"
        if outcome == _ABANDON:
            self._reject_bare(call)
        elif call.tagged:
            self._finish_tagged(call, closed=outcome == _END)
        else:
            self._finish_bare(call)
        return j, False

    def _scan(self, call: _PendingCall, buf: str, i: int, final: bool) -> tuple[int, int]:
        n = len(buf)
        base = call.length - i  # offset of buf[0] within the call's text
        while i < n:
            quote = call.quote
            if quote:
                i = self._scan_string(call, buf, i, quote)
                continue
            m = _JSON_STRUCT.search(buf, i)
            stop = m.start() if m else n
            if stop > i and _NON_SPACE.search(buf, i, stop):
                call.prev = "x"
            if m is None:
                return _MORE, n
            c, i = buf[stop], stop + 1
            if c in "}]":
                call.depth = max(call.depth - 1, 0)
                call.prev = c
                if call.depth == 0 and self._value_ended(call, base + i):
                    return _END, i
            elif c in "<[":
                outcome = self._markup_in_call(call, buf, stop, final, base + i)
                if outcome != _MORE:
                    return outcome, stop + len(call.close) if outcome == _END else stop
            else:
                self._structure(call, c, base + i)
        return _MORE, n

    def _value_ended(self, call: _PendingCall, offset: int) -> bool:
        """The call's JSON value is complete at `offset`; True when that ends the call (a bare
        one has no close tag to wait for)."""
        call.complete = True
        if call.value_end < 0:
            call.value_end = offset
        return not call.tagged

    def _scan_string(self, call: _PendingCall, buf: str, i: int, quote: str) -> int:
        n = len(buf)
        if call.escape:
            call.escape = False
            if call.capturing:
                call.captured.append(buf[i])
            return i + 1
        m = _STRING_STOP[quote].search(buf, i)
        if m is None:
            if call.capturing:
                call.captured.append(buf[i:])
            return n
        j = m.start()
        if buf[j] == "\\":
            end = j + 2
            if end > n:
                end, call.escape = n, True
            if call.capturing:
                call.captured.append(buf[i:end])
            return end
        call.quote = ""
        call.prev = quote
        if call.capturing:
            call.captured.append(buf[i:j])
            call.capturing = False
            self._string_closed(call, "".join(call.captured), quote)
        return j + 1

    def _string_closed(self, call: _PendingCall, raw: str, quote: str) -> None:
        if call.expect_name:
            call.expect_name = False
            if call.name is None:
                call.name = _decode_string(raw, quote)
                call.forming_at = 0  # show the name as soon as it is known
            return
        call.last_string = raw

    def _key_or_comma(self, call: _PendingCall, c: str, offset: int) -> None:
        key, call.last_string = call.last_string, None
        call.expect_name = False
        if c == "," or key is None:
            return
        if key == "name":
            call.expect_name = True
        elif key in _ARGUMENT_KEYS and call.args_start < 0:
            call.args_start = offset

    def _markup_in_call(
        self, call: _PendingCall, buf: str, j: int, final: bool, offset: int
    ) -> int:
        """A `<` or `[` outside strings at j (`offset` just after it in the call's text): the
        call's close tag or the next call's opener end the call; otherwise it is the call's."""
        if buf[j] == "<":
            outcome = self._angle_in_call(call, buf, j, final)
            if outcome == _MORE:
                call.prev = "x"
            return outcome
        if call.complete and not call.depth:
            outcome = _next_marker(buf, j, final)
            if outcome != _MORE:
                return outcome
        self._structure(call, "[", offset)
        return _MORE

    def _angle_in_call(self, call: _PendingCall, buf: str, j: int, final: bool) -> int:
        if not call.tagged:
            return _ABANDON  # `<` cannot appear outside a JSON string: this was prose
        close = call.close
        if buf.startswith(close, j):
            return _END
        if not final and len(buf) - j < len(close) and close.startswith(buf[j:]):
            return _STALL
        if call.depth == 0:
            # A new call opens at the top level. After a complete value, the first call just
            # lacked its close tag; before any JSON, the first "<tool_call>" was prose.
            opener = _match_opener(buf, j)
            if opener is not None and (call.complete or opener.canonical):
                return _IMPLICIT_END if call.complete else _ABANDON
            if not final and _could_open(buf, j):
                return _STALL
        return _MORE

    # --- turning finished call text into events -------------------------------------------------

    def _finish_tagged(self, call: _PendingCall, *, closed: bool) -> None:
        """A call's tags closed (everything inside is call text: one JSON value or several), or
        the call ended without its close tag (then text after its JSON value is the reply's
        text again, and is read as such)."""
        self._fence_open = self._fence_open or call.fenced
        raw = call.text()
        end = len(raw) - len(call.close) if closed else len(raw)
        split = -1 if closed else _after_value(raw, call.open_len, call.value_end, end)
        content = raw[call.open_len : split if split >= 0 else end]
        for outcome in _read_tagged(content, call.fixed_name, raw[: call.open_len]):
            self._add(outcome, raw[:split] if split >= 0 else raw)
        if split >= 0:
            self._absorb(raw[split:end])

    def _absorb(self, text: str) -> None:
        """Text that followed a call's JSON value inside the call's span (prose after a call
        with no close tag, or a second call in the same tags): parsed on its own, as a reply
        of its own, and its text, calls and errors taken in here. Nothing is dropped."""
        if not text.strip():
            return
        inner = CallTextParser(self._prefix)
        inner._state = "text"  # no <think> block starts mid-reply
        inner._fence_open = self._fence_open
        inner._next_id = self._next_id
        events = [*inner.feed(text), *inner.close()]
        self._fence_open = inner._fence_open
        self._next_id = inner._next_id
        self.calls += inner.calls
        self.errors += inner.errors
        for event in events:
            if isinstance(event, TextDelta):
                self._emit(event.text)
            elif isinstance(event, (ToolCallParsed, ParseError)):
                self._flush()
                self._out.append(event)

    def _finish_bare(self, call: _PendingCall) -> None:
        raw = call.text()
        try:
            loaded = load_json(raw)
        except JsonProblem as problem:
            if call.looks_like_call():  # it has a name and arguments: a call, badly written
                self._fence_open = self._fence_open or call.fenced
                self._add_error(
                    f"The tool call was not run: {problem}. {FORMAT_HINT}", raw, truncated=False
                )
            else:
                self._reject_bare(call)
            return
        found = _bare_calls(loaded.value)
        if found is None:
            self._reject_bare(call)
            return
        self._fence_open = self._fence_open or call.fenced
        for read in found:
            self._add(replace(read, repaired=loaded.repaired), raw)

    def _reject_bare(self, call: _PendingCall) -> None:
        """Show a candidate that turned out not to be a call, exactly as it was written."""
        self._emit(call.fence_prefix + call.text())
        if call.fenced:
            self._state = "code"

    def _finish_at_end(self, call: _PendingCall) -> str:
        """Settle a call still open when the reply ends; return text that still needs a scan."""
        self._call = None
        self._state = "text"
        raw = call.text()
        if not call.tagged:
            if call.looks_like_call():
                self._truncated(raw, "")
            else:
                self._reject_bare(call)
            return ""
        # A close tag the scan passed over was inside a string. When every string closed, that
        # was data (a tool that writes markup: `{"text": "a</s>b"}`), not the call's end.
        cut = raw.rfind(call.close, call.open_len) if call.quote else -1
        if cut >= 0:
            # The close tag is there but the scan is still inside a string: a quote was never
            # closed, or the reply was cut inside a string that quoted the tag. Running what
            # repair would guess is unsafe either way, so report it and show the text after it.
            end = cut + len(call.close)
            self._fence_open = self._fence_open or call.fenced
            message = (
                "The tool call has a string that is never closed (a missing or unescaped "
                "quote, or the reply was cut off), so it was not run. Escape quotes inside "
                f'strings as \\". {FORMAT_HINT}'
            )
            self._add_error(message, raw[:end], truncated=False)
            return raw[end:]
        content = raw[call.open_len :].lstrip()
        if call.complete:
            self._finish_tagged(call, closed=False)
        elif content and content[0] not in "{[<":
            self._reject_bare(call)  # "<tool_call>" mentioned in prose, never closed
        else:  # a marker's end token is no tag the model was asked to write: not named
            self._truncated(raw, "" if call.close in _MARKERS.values() else call.close)
        return ""

    def _truncated(self, raw: str, close: str) -> None:
        missing = f"no closing {close} and " if close else ""
        message = (
            f"The reply ended inside a tool call ({missing}the JSON is incomplete), so it was "
            f"not run. Send the whole call again. {FORMAT_HINT}"
        )
        self._add_error(message, raw, truncated=True)

    def _add(self, outcome: _CallRead | str, raw: str) -> None:
        if isinstance(outcome, str):
            self._add_error(outcome, raw, truncated=False)
            return
        call = ToolCall(
            id=self._new_id(),
            name=outcome.name,
            arguments=outcome.arguments,
            raw=raw,
            repaired=outcome.repaired,
            ref=outcome.ref,
            depends_on=outcome.depends_on,
        )
        self.calls.append(call)
        self._flush()
        self._out.append(ToolCallParsed(call=call))

    def _add_error(self, message: str, raw: str, *, truncated: bool) -> None:
        error = ParseError(message=message, raw=raw, call_id=self._new_id(), truncated=truncated)
        self.errors.append(error)
        self._flush()
        self._out.append(error)

    def _new_id(self) -> str:
        self._next_id += 1
        return f"{self._prefix}{self._next_id - 1}"

    # --- output ---------------------------------------------------------------------------------

    def _emit(self, text: str) -> None:
        if text:
            self._pending_text.append(text)

    def _reason(self, text: str) -> None:
        if text:
            self._pending_reasoning.append(text)

    def _flush(self) -> None:
        if self._pending_reasoning:
            reasoning = "".join(self._pending_reasoning)
            self._pending_reasoning = []
            self._reasoning_parts.append(reasoning)
            self._out.append(ReasoningDelta(text=reasoning))
        if self._pending_text:
            text = "".join(self._pending_text)
            self._pending_text = []
            self._text_parts.append(text)
            self._out.append(self._text_delta(text))

    def _maybe_forming(self) -> None:
        call = self._call
        if call is None or call.length < call.forming_at or not call.looks_like_call():
            return
        # Re-sending the whole text on every chunk would be quadratic: grow the step with it.
        call.forming_at = call.length + max(64, call.length // 8)
        name = call.fixed_name or call.name
        start = call.args_start if call.args_start >= 0 else call.open_len
        shown = (name, call.length - start if call.args_start >= 0 or call.fixed_name else 0)
        if shown == call.last_shown:
            return
        call.last_shown = shown
        raw = call.text()
        arguments = raw[start:].lstrip() if shown[1] else ""
        self._flush()
        self._out.append(CallForming(index=self._next_id, name=name, arguments_text=arguments))


def parse_text(text: str, call_id_prefix: str = "call_") -> ParsedText:
    """Parse a whole reply at once (the same core as streaming, fed one chunk)."""
    parser = CallTextParser(call_id_prefix)
    parser.feed(text)
    parser.close()
    return ParsedText(
        text=parser.text,
        calls=tuple(parser.calls),
        errors=tuple(parser.errors),
        reasoning=parser.reasoning,
    )


# --- helpers on plain strings ---------------------------------------------------------------------


def _plain_text(text: str) -> bool:
    return bool(text) and _TEXT_SPECIAL.search(text) is None


def _skip_space(buf: str, i: int) -> int | None:
    """End of the whitespace run at i, or None when it is too long to be layout around a call."""
    m = _SPACE_RUN.match(buf, i)
    end = m.end() if m else i
    return None if end - i > _SPACE_LIMIT else end


def _call_json_at(buf: str, i: int, final: bool) -> bool | None:
    """Whether a call's JSON begins at i, after space: an object, or a list whose first item is
    one ("[TOOL_CALLS] [see the docs]" is prose); None while the buffer ends before it shows."""
    k = _skip_space(buf, i)
    for _ in range(2):  # `{`, or `[` and then `{`
        if k is None:
            return False
        if k == len(buf):
            return None if not final else False
        if buf[k] != "[":
            return buf[k] == "{"
        k = _skip_space(buf, k + 1)
    return False


def _partial_suffix(buf: str, pos: int, marker: str) -> int:
    """Where a tail of buf that could still grow into `marker` begins (len(buf) if none)."""
    for i in range(max(pos, len(buf) - len(marker) + 1), len(buf)):
        if marker.startswith(buf[i:]):
            return i
    return len(buf)


def _next_marker(buf: str, j: int, final: bool) -> int:
    """After a call's whole value, a `[` at j: the next call's [TOOL_CALLS] (Mistral writes
    calls one after another, each with its marker) ends this one."""
    if buf.startswith(_MISTRAL, j):
        return _IMPLICIT_END
    if not final and len(buf) - j < len(_MISTRAL) and _MISTRAL.startswith(buf[j:]):
        return _STALL
    return _MORE


def _mistral_named(buf: str, i: int, final: bool) -> _Opener | Literal[False] | None:
    """Mistral's v11+ call head after [TOOL_CALLS] at i: NAME, optionally [CALL_ID]ID, then
    [ARGS] (which a server may have dropped), right before the arguments' `{`. The opener, with
    the name, when it is one; False when it is not; None while the buffer ends before it shows."""
    m = _MISTRAL_NAME.match(buf, i)
    if m is None:
        return False
    k = m.end()
    for part, start in zip(_MISTRAL_PARTS, _MISTRAL_PART_STARTS, strict=True):
        found = part.match(buf, k)
        if found is not None:
            k = found.end()
        elif not final and len(buf) - k <= len(start) and start.startswith(buf[k:]):
            return None  # the buffer ends at the name, or inside "[CALL_ID]" or "[ARGS]"
    # With [ARGS] written, a `{` is the arguments; without it, only one that starts as a JSON
    # object does (`"` or `}` next), so "[TOOL_CALLS]name{x}" in prose stays prose.
    follows = _object_at(buf, k, final, keyed=not buf.endswith("[ARGS]", i, k))
    if follows is not True:
        return None if follows is None else False
    return _Opener(k, _MARKERS[_MISTRAL], m.group(), canonical=False)


def _object_at(buf: str, k: int, final: bool, *, keyed: bool) -> bool | None:
    """Whether a JSON object opens at k (`keyed`: a quoted key or `}` next, after space); None
    while the buffer ends before it shows."""
    if k == len(buf):
        return None if not final else False
    if buf[k] != "{":
        return False
    if not keyed:
        return True
    n = _skip_space(buf, k + 1)
    if n is None:
        return False
    if n == len(buf):
        return None if not final else False
    return buf[n] in '"}'


def _match_opener(buf: str, j: int) -> _Opener | None:
    for marker, close in _MARKERS.items():
        if buf.startswith(marker, j):
            return _Opener(j + len(marker), close, None, canonical=False)
    m = _OPENER.match(buf, j)
    if m is not None:
        name = m.group(1)
        return _Opener(m.end(), f"</{name}>", None, canonical=name == "tool_call")
    m = _FUNCTION_OPENER.match(buf, j)
    if m is not None:
        return _Opener(m.end(), "</function>", m.group(1) or m.group(2), canonical=False)
    return None


_LONGEST_PREFIX = 96
"""More characters than any opener's unfinished start (`<function name="` and a 64-character
name): a longer rest of the buffer cannot be one, and is not copied to find out - for each
`<` or `[` of a long reply read at once, that copy made the read quadratic."""


def _could_open(buf: str, j: int) -> bool:
    """True when buf[j:] (which runs to the end of the buffer) may still become an opener."""
    if len(buf) - j > _LONGEST_PREFIX:
        return False
    rest = buf[j:]
    if rest in _TAG_PREFIXES or "<function".startswith(rest):
        return True
    return _FUNCTION_PREFIX.fullmatch(rest) is not None


def _decode_string(raw: str, quote: str) -> str:
    """A string's text with JSON's escapes decoded (a single-quoted one's, as written)."""
    if quote != '"':
        return raw
    try:
        return str(json.loads(f'"{raw}"'))
    except ValueError:
        return raw


def _after_value(raw: str, start: int, value_end: int, end: int) -> int:
    """Where the text after an unclosed call's first JSON value begins (-1 when nothing follows
    it). Closing brackets right after the value are a stray part of the call, not text; and text
    that goes on as JSON would (`, "arguments": ...`) means the value only looked complete: a
    bracket closed too early, so it is all one broken call."""
    if not start < value_end < end or raw[start:end].lstrip()[:1] not in ("{", "["):
        return -1
    m = _STRAY_CLOSERS.match(raw, value_end, end)
    split = m.end() if m and m.group().strip() else value_end
    after = raw[split:end].lstrip()
    return split if after and after[0] not in _JSON_GOES_ON else -1


@dataclass(frozen=True)
class _CallRead:
    """What one call object says: its name and arguments, and (for --dag) its own id and the
    ids of the calls it waits for."""

    name: str
    arguments: Any
    repaired: bool = False
    ref: str | None = None
    depends_on: tuple[str, ...] = ()


def _call_fields(value: Any, *, need_arguments: bool) -> _CallRead | str:
    """What a call object says, or why it is not one."""
    if not isinstance(value, dict):
        return "The tool call is not a JSON object."
    outer = value
    if "name" not in value and isinstance(value.get("function"), dict):
        value = value["function"]
    name = value.get("name")
    if not isinstance(name, str) or not name.strip():
        return 'The tool call has no "name" string.'
    ref, depends_on = call_ref(outer.get("id")), dependency_ids(outer.get("depends_on"))
    for key in _ARGUMENT_KEYS:
        if key in value:
            arguments = decode_nested(value[key])
            return _CallRead(name.strip(), arguments, ref=ref, depends_on=depends_on)
    if need_arguments:
        return 'The tool call has no "arguments".'
    return _CallRead(name.strip(), {}, ref=ref, depends_on=depends_on)


def _bare_calls(value: Any) -> list[_CallRead] | None:
    """The calls in a bare JSON value, or None when it is ordinary data."""
    items = value if isinstance(value, list) else [value]
    found = [_call_fields(item, need_arguments=True) for item in items]
    calls = [f for f in found if not isinstance(f, str)]
    if not calls or len(calls) < len(found):
        return None
    return calls


def _read_tagged(content: str, fixed_name: str | None, tag: str) -> list[_CallRead | str]:
    """The calls or error messages for one tagged call's content."""
    body = content.strip()
    if fixed_name is None and body.startswith("<function="):
        return _read_xml_function(body)
    if not body:
        return [f"The {tag} block is empty. {FORMAT_HINT}"]
    pieces = _values_in_turn(body)
    if len(pieces) > 1:  # several calls in one pair of tags: each is read on its own
        return [item for piece in pieces for item in _read_tagged(piece, fixed_name, tag)]
    try:
        loaded = load_json(body)
    except JsonProblem as problem:
        return [f"The call inside {tag} was not run: {problem}. {FORMAT_HINT}"]
    value = loaded.value
    if fixed_name is not None:
        value = {"name": fixed_name, "arguments": value}
    items = value if isinstance(value, list) and value else [value]
    read = [
        _tagged_item(item, loaded.repaired, len(items) > 1, n) for n, item in enumerate(items, 1)
    ]
    if len(read) > 1 and all(isinstance(r, str) for r in read):
        return [f"The JSON list inside {tag} holds no tool call. {FORMAT_HINT}"]
    return read


def _values_in_turn(body: str) -> list[str]:
    """The JSON values written one after another in `body` (spaces, or a comma or semicolon
    between them), as texts: the strict ones that lead, then the rest as one piece (which may
    still need repair). The whole body as one piece when it does not start with a strict value,
    or when what follows one goes on as JSON would (`{"name": "f"}, "arguments": ...`: a
    bracket closed too early, so it is one broken call, not a call and some junk)."""
    decoder = json.JSONDecoder()
    pieces: list[str] = []
    position = 0
    while position < len(body):
        try:
            _, end = decoder.raw_decode(body, position)
        except (ValueError, RecursionError):
            break
        pieces.append(body[position:end])
        gap = _BETWEEN_VALUES.match(body, end)
        position = gap.end() if gap else end
        if position < len(body) and body[position] not in "{[":
            if body[end:].lstrip()[:1] in _JSON_GOES_ON:
                return [body]
            break
    rest = body[position:].strip()
    if not pieces:
        return [body]
    if not rest.strip("}] \t\r\n"):  # only stray closing brackets left: syntax, not a call
        return [body] if len(pieces) == 1 else pieces
    return [*pieces, rest]


def _tagged_item(item: Any, repaired: bool, in_list: bool, n: int) -> _CallRead | str:
    fields = _call_fields(item, need_arguments=False)
    where = f"Item {n} of the list: " if in_list else ""
    if isinstance(fields, str):
        return f"{where}{fields} {FORMAT_HINT}"
    return replace(fields, repaired=repaired)


def _read_xml_function(body: str) -> list[_CallRead | str]:
    """Qwen3-Coder's `<function=NAME><parameter=KEY>value</parameter></function>` body."""
    calls: list[_CallRead | str] = []
    for m in _XML_FUNCTION.finditer(body):
        arguments = {p.group(1): p.group(2) for p in _XML_PARAMETER.finditer(m.group(2))}
        calls.append(_CallRead(m.group(1), arguments))
    return calls or [f"The <function=...> call could not be read. {FORMAT_HINT}"]
