"""A prompt follower: the second model of the prompt kata. It knows what each question asks
for (the calls a capable model means to make), and nothing of how to write them: that it takes
only from the system prompt it is given, as a model that has never seen toolcall would.

- The call format is the prompt's example: the tag it is wrapped in, the key its tool name
  goes under and the key its arguments go under. No example call in tags, no calls.
- A tool is called only when the prompt names it; an argument is given only when the prompt
  names it; a value the prompt must list (an allowed value) only when the prompt shows it.
- Several calls go in one reply only when the prompt says several are allowed; else the first.

Its interface is the one the kata's grader runs every model through: given the system prompt
and a question, the reply's text (`ReplyModel`)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

ReplyModel = Callable[[str, str], str]
"""(system prompt, question) -> the reply's text."""

_TAGGED = re.compile(r"<([A-Za-z][\w.:-]*)>(.*?)</\1>", re.S)
_KEY = re.compile(r'"([A-Za-z_]\w*)"\s*:\s*(["{])')
_TOOL_DEFINITION = re.compile(r'"type"\s*:\s*"function"')
"""The mark of a tool's definition as the request's "tools" entries write it: a prompt that
lists them in tags (as Qwen's and Hermes' own templates do, in <tools>) shows the tools there,
not how to call one."""
_SEVERAL = re.compile(
    r"several|multiple|more than one|one (?:block|tag) (?:per|for each|each)|each call|"
    r"parallel|多个|几个|多次",
    re.I,
)
"""How prompts say that one reply may hold several calls."""

NO_FORMAT = "I would use a tool for this, but I was not shown how to write a call."
NO_TOOL = "I have no tool for this."
ANSWER = "Hello! I am an assistant. Ask me anything."


@dataclass(frozen=True)
class Intended:
    """A call the question asks for, as a model means it before it reads how to write it."""

    name: str
    arguments: dict[str, Any]
    listed: tuple[str, ...] = ()
    """Arguments whose value the model takes only from a list of allowed values in the prompt."""


@dataclass(frozen=True)
class CallShape:
    """How the prompt's example writes a call."""

    tag: str
    name_key: str
    arguments_key: str

    def write(self, name: str, arguments: dict[str, Any]) -> str:
        call = {self.name_key: name, self.arguments_key: arguments}
        return f"<{self.tag}>{json.dumps(call, ensure_ascii=False)}</{self.tag}>"


def call_shape(prompt: str) -> CallShape | None:
    """The format of the first example call in tags: a JSON object with a key whose value is
    a string (the tool's name) and one whose value is an object (its arguments). Tool
    definitions in tags have that shape too, and are no example."""
    for tag, body in _TAGGED.findall(prompt):
        if "{" not in body or _TOOL_DEFINITION.search(body):
            continue
        keys = _KEY.findall(body)
        name_key = next((key for key, opens in keys if opens == '"'), None)
        arguments_key = next((key for key, opens in keys if opens == "{"), None)
        if name_key and arguments_key:
            return CallShape(tag, name_key, arguments_key)
    return None


def named(prompt: str, word: str) -> bool:
    """`word` stands in the prompt as a word of its own."""
    return re.search(rf"(?<![\w]){re.escape(word)}(?![\w])", prompt) is not None


def as_told(prompt: str, intended: Intended) -> Intended | None:
    """The call with only what the prompt makes known: None when it names no such tool."""
    if not named(prompt, intended.name):
        return None
    kept = {
        key: value
        for key, value in intended.arguments.items()
        if named(prompt, key) and (key not in intended.listed or named(prompt, str(value)))
    }
    return Intended(intended.name, kept)


@dataclass
class PromptFollower:
    """`ReplyModel`: each question's intended calls, written as the prompt says."""

    plans: Mapping[str, Sequence[Intended]]

    def __call__(self, prompt: str, question: str) -> str:
        intended = self.plans.get(question, ())
        if not intended:
            return ANSWER
        shape = call_shape(prompt)
        if shape is None:
            return NO_FORMAT
        calls = [c for c in (as_told(prompt, i) for i in intended) if c is not None]
        if not calls:
            return NO_TOOL
        if not _SEVERAL.search(prompt):
            calls = calls[:1]
        return "\n".join(shape.write(c.name, c.arguments) for c in calls)
