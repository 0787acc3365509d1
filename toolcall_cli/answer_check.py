"""Whether a reply without calls is an answer. A weak model "answers" with nothing, a tool's
name, a call id, toolcall's own note or the user's question repeated, or a call it wrote as
JSON text: none of that ends a run; it is fed back, saying what was wrong and what to do."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from toolcall_cli import feedback
from toolcall_cli.history import ENGINE_NOTE_PREFIX, SUMMARY_PREFIX, result_data, result_json
from toolcall_cli.messages import Message
from toolcall_cli.strategies.content_calls import looks_like_call_json

ECHO_WORDS = 6
"""A run of this many words of an engine note, found in a reply, is an echo of the note (the
notes are instructions; no answer needs to repeat six of their words in a row). Eight let "The
last tool call was not an answer: it repeats the error note instead of answering. Please check
the built-in table..." through, from Qwen2.5-0.5B."""
PARAPHRASE_WORDS = 6
"""A reply this long or longer, made (nearly) only of words toolcall's notes or a tool's errors
hold, says those back in other words: "That was not an answer. It repeats the toolcall's note
instead of answering." came back from Qwen2.5-0.5B, ending a run as if it answered."""
PARAPHRASE_SHARE = 0.85
FILLERS = frozenset({"the", "a", "an", "s", "this", "that", "is", "was"})
"""Words a paraphrase adds or drops without changing what it repeats."""
MIN_QUESTION_CHARS = 6
"""A question shorter than this ("hi") may rightly be answered with itself."""
_NON_WORD = re.compile(r"\W+")
_NAME_DRESSING = "`'\"*. \t\r\n"


@dataclass(frozen=True)
class NotAnAnswer:
    why: str
    """What the reply was, as the view and the model are told: "it repeats the question"."""

    def feedback(self, *, tools: bool, question: str) -> str:
        """The note for the model: what was wrong, the question again, and what to do instead
        (see feedback.answer_note)."""
        return feedback.answer_note("not_an_answer", question, tools=tools, why=self.why)


_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_MARKUP = re.compile(r"</?[A-Za-z_][\w-]*>|```\w*")
"""Tags and fences: a reply of nothing else ("</tool_call>", an empty fence) holds no words."""
_ERROR_MARK = re.compile(r"Error\s*:")
"""How toolcall writes a failed call's result. A reply that starts so, in a run that got one, is
the error passed on in other words ("Error: The 'country' parameter must be a string…" after
"Error: unknown country 'beijing'", from Qwen2.5-0.5B), not an answer."""
_HELD_ERROR = re.compile(r"(?<![A-Za-z])Error:")
"""toolcall's mark inside a reply ("…, Error: unknown tool…"), not the end of an exception's
name ("RuntimeError: the weather service is down", the tool's own words passed on)."""
_RESULT_TAG = re.compile(r"</?tool_result\b")
"""Results are what toolcall writes; a reply that starts as one is the model playing the engine."""
_SUMMARY_MARKS = re.compile(
    re.escape(SUMMARY_PREFIX) + r"|^\s*-\s*\w+\(\{.*\}\)\s*->|\(the same call \d+ times\)",
    re.MULTILINE,
)
"""What only toolcall's summary of earlier rounds writes: its heading, its lines "-
calculate({...}) -> 126" and its count "(the same call 2 times)". A reply holding one hands
the summary back (seen under schema: a get_weather result and that count, as the answer)."""
RESULT_HEAD_CHARS = 40
"""A reply that begins as a JSON result begins, for this many characters (spacing aside), is
that result handed back, even cut short: the summary of older rounds keeps only a result's
first 120 characters, and a reply copied from it does not parse."""
ENGINE_NAME_ECHO_WORDS = 4
"""A reply that speaks of toolcall by name and repeats this many words of its notes in a row
is about the note, not the question: "Based on the conversation, it appears that the toolcall
has already returned the result you already had." (Qwen2.5-0.5B, ending a run as an answer)."""
_ENGINE_NAME = re.compile(r"\btoolcall\b|\btool call\b", re.IGNORECASE)
_INSTRUCTION = re.compile(r"\banswer (?:the question )?with\b", re.IGNORECASE)
"""A refusal that tells the model to answer ("`126` is a result you already have from this
run; answer the question with it…") is toolcall's instruction, as its notes are: a reply that
says it back ("Answer: 126 is a result you already have from this run; …", from Qwen2.5-0.5B)
is no answer."""


@dataclass(frozen=True)
class Conversation:
    """What a reply is judged against: the run so far."""

    question: str
    tools: Collection[str] = ()
    call_ids: Collection[str] = ()
    notes: Sequence[str] = ()
    """What toolcall itself told the model (its instructions, the notes on results)."""
    errors: Sequence[str] = ()
    """The error results the model was given."""
    unreadable: str | None = None
    """Why content shaped like a call could not be read as one."""
    results: Sequence[str] = ()
    """The results the model was given, as it read them."""

    @classmethod
    def of_run(
        cls,
        question: str,
        *,
        tools: Collection[str],
        call_ids: Collection[str],
        messages: Sequence[Message],
        unreadable: str | None,
    ) -> Conversation:
        """The run so far, from its `messages`: toolcall's notes, the errors and the results."""
        return cls(
            question,
            tools=tools,
            call_ids=call_ids,
            notes=list(engine_notes(messages)),
            errors=list(tool_errors(messages)),
            unreadable=unreadable,
            results=list(tool_results(messages)),
        )


def judge(text: str, said: Conversation) -> NotAnAnswer | None:
    """None when `text` is an answer, said after `said`; otherwise what it is instead."""
    stripped = text.strip()
    for check in CHECKS:
        why = check(stripped, said)
        if why is not None:
            return NotAnAnswer(why)
    return None


def _empty(text: str, said: Conversation) -> str | None:
    if not text:
        return "the reply was empty"
    if not words(_MARKUP.sub(" ", text)) or text in ("{}", "[]", "null"):
        return "it holds no words: only marks or an empty value"
    return None


def _a_result(text: str, said: Conversation) -> str | None:
    if _RESULT_TAG.match(text):
        return "it is a tool result written by the model itself, not an answer"
    if holds_a_result(text, said.results):
        return "it hands back a tool result as it came; say in words what it means"
    return None


def _a_call(text: str, said: Conversation) -> str | None:
    if said.unreadable is None and not looks_like_call_json(text):
        return None
    problem = f" ({said.unreadable.rstrip('.')})" if said.unreadable else ""
    return f"it is a tool call written as JSON text, and it could not be read as a call{problem}"


def _a_name(text: str, said: Conversation) -> str | None:
    bare = bare_word(text)
    if bare in said.tools:
        return f"it is only the name of the tool `{bare}`; to use it, call it with its arguments"
    if bare in said.call_ids:
        return f"it is only `{bare}`, the id of an earlier call"
    return None


def _a_note(text: str, said: Conversation) -> str | None:
    text, notes = question_marked(text, said.notes, said.question)
    if text.startswith(ENGINE_NOTE_PREFIX) or echoes_a_note(text, notes) or said_again(text, notes):
        return "it repeats toolcall's note instead of answering"
    if _SUMMARY_MARKS.search(text):
        return "it repeats toolcall's summary of earlier tool calls instead of answering"
    if _ENGINE_NAME.search(text) and echoes_a_note(text, notes, ENGINE_NAME_ECHO_WORDS):
        return "it speaks of toolcall's note instead of answering"
    return None


def _an_error(text: str, said: Conversation) -> str | None:
    errors = said.errors
    if text.startswith("Error"):
        passed_on = any(text in error for error in errors) or said_again(text, errors)
        repeats = passed_on or bool(errors and _ERROR_MARK.match(text))
    else:
        # "…, Error: unknown tool `sqrt(2)*100 rounded to 2 decimals`…" ended a run with 0
        marked = _HELD_ERROR.search(text)
        repeats = marked is not None and echoes_a_note(text[marked.end() :], errors)
    return "it repeats a tool's error instead of answering" if repeats else None


def _the_question(text: str, said: Conversation) -> str | None:
    if echoes(text, said.question):
        return "it repeats the question"
    if repeats_the_sum(text, said.question):
        return "it only repeats the numbers of the question, with no result"
    return None


CHECKS: tuple[Callable[[str, Conversation], str | None], ...] = (
    _empty,
    _a_result,
    _a_call,
    _a_name,
    _an_error,
    _a_note,
    _the_question,
)
"""What a reply may be instead of an answer, in the order they are looked for."""


def bare_word(text: str) -> str:
    """A one-word reply without its dressing: `get_weather()`, "call_1_0"."""
    word = text.strip(_NAME_DRESSING)
    return word.removesuffix("()").strip(_NAME_DRESSING)


def words(text: str) -> list[str]:
    return [w for w in _NON_WORD.split(text.casefold()) if w]


QUESTION_MARK_WORD = "thequestionitself"
"""What the question becomes in a note and in a reply before they are compared: one word."""


def question_marked(text: str, notes: Sequence[str], question: str) -> tuple[str, list[str]]:
    """`text` and `notes` with the question made one word. The notes that ask for the answer
    say the question again, so without this an answer that says the question back ("The
    square root of 2025, plus 17 is 62.") would hold six of a note's words in a row; a reply
    that is the note's own "The question was: …" still is a piece of the note."""
    if not question.strip():
        return text, list(notes)
    mark = f" {QUESTION_MARK_WORD} "
    return text.replace(question, mark), [note.replace(question, mark) for note in notes]


def echoes_a_note(text: str, notes: Sequence[str], run: int = ECHO_WORDS) -> bool:
    """`text` is a piece of a note, or holds `run` of a note's words in a row."""
    said = f" {' '.join(words(text))} "
    for note in notes:
        note_words = words(note.removeprefix(ENGINE_NOTE_PREFIX))
        if len(said.split()) >= 4 and said in f" {' '.join(note_words)} ":
            return True  # the reply is a piece of the note
        for start in range(max(len(note_words) - run + 1, 0)):
            if f" {' '.join(note_words[start : start + run])} " in said:
                return True
    return False


def holds_a_result(text: str, results: Sequence[str]) -> bool:
    """`text` holds a JSON object or array that a result was, whole or but for a field or two
    (a model drops the `note`): the result handed back as it came, not read for the question.
    A figure taken from a result is an answer; the result's JSON is not."""
    given = [value for value in map(result_json, results) if value]
    if not given:
        return False
    head = _head(text)
    if head.startswith(("{", "[")) and any(
        _head(r).startswith(head[:RESULT_HEAD_CHARS]) for r in results
    ):
        return True
    for found in json_values_in(text):
        for value in given:
            if found == value or _most_of(found, value):
                return True
    return False


def _head(text: str) -> str:
    return "".join(text.split())


def _most_of(found: Any, result: Any) -> bool:
    """Two or more of a result object's fields, with their values, and nothing else."""
    if not isinstance(found, dict) or not isinstance(result, dict) or len(found) < 2:
        return False
    return all(key in result and result[key] == value for key, value in found.items())


def json_values_in(text: str, most: int = 20) -> Iterator[Any]:
    """The JSON objects and arrays written in `text`, at most `most` of them tried."""
    decoder = json.JSONDecoder()
    tried = 0
    for match in re.finditer(r"[{\[]", text):
        if tried >= most:
            return
        tried += 1
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, (dict, list)) and value:
            yield value


def said_again(text: str, sources: Sequence[str]) -> bool:
    """`text` is (nearly) all words of `sources`, reworded: a note or an error said back.
    Short replies are left alone ("I could not find out."), and so is any reply with a word of
    its own past the share (a figure, a city)."""
    said = [w for w in words(text) if w not in FILLERS]
    if len(said) < PARAPHRASE_WORDS:
        return False
    known = {w for source in sources for w in words(source)}
    return sum(w in known for w in said) >= PARAPHRASE_SHARE * len(said)


def echoes(text: str, question: str) -> bool:
    """The question repeated (once or more), and nothing else."""
    asked = "".join(words(question))
    if len(asked) < MIN_QUESTION_CHARS:
        return False
    said = "".join(words(text))
    # Only the question itself, once or more: "Is 7 prime? No." adds a word, and is an answer.
    return asked in said and said.replace(asked, "") == ""


def repeats_the_sum(text: str, question: str) -> bool:
    """A piece of the question holding its numbers, with nothing new: "123 * 47 + 19" for
    "What is 123 * 47 + 19?". Small models do this instead of calling the calculator. Two
    numbers at least, so "5" for "3 or 5?" stays an answer."""
    numbers = _NUMBER.findall(text)
    if len(numbers) < 2 or not set(numbers) <= set(_NUMBER.findall(question)):
        return False
    said = "".join(words(text))
    return said in "".join(words(question))


def tool_errors(messages: Sequence[Message]) -> Iterator[str]:
    """The error results toolcall fed back in `messages` (each as the model read it)."""
    for message in messages:
        content = message.content or ""
        if message.role in ("tool", "user") and "Error:" in content:
            yield content


def tool_results(messages: Sequence[Message]) -> Iterator[str]:
    """The results fed back in `messages`, as the model read them."""
    for message in messages:
        if message.role == "tool" and message.content:
            yield message.content


def engine_notes(messages: Sequence[Message]) -> Iterator[str]:
    """What toolcall itself said to the model in `messages`: its instructions, the notes it
    added to tool results (each from its `[toolcall]` mark to the end of the message), and the
    error results it wrote itself (a call refused: not the tool's own exception)."""
    for message in messages:
        if message.role not in ("user", "tool"):
            continue  # what the model said itself is not a note it was given
        content = message.content or ""
        if engine_error(message):
            yield result_data(content)
        start = content.find(ENGINE_NOTE_PREFIX)
        while start >= 0:
            end = content.find(ENGINE_NOTE_PREFIX, start + 1)
            yield content[start : end if end >= 0 else len(content)]
            start = end


def engine_error(message: Message) -> bool:
    """A call refused with an instruction to answer instead: toolcall's own words to the
    model, not a tool's error."""
    content = message.content or ""
    return (
        message.role == "tool"
        and content.startswith("Error:")
        and bool(_INSTRUCTION.search(content))
    )
