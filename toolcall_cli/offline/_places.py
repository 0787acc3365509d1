"""Places in a question: the gazetteer's, and names that look like places."""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Sequence

from toolcall_cli.messages import ToolSpec
from toolcall_cli.offline import _lexicon as lx
from toolcall_cli.offline._words import properties, split_identifier

_ALL_TERMS = frozenset(
    term.lower() for terms in lx.CONCEPTS.values() for term in terms if not lx.has_cjk(term)
)
_NOT_PLACES = frozenset(
    lx.words(
        "monday tuesday wednesday thursday friday saturday sunday january february march "
        "april may june july august september october november december should will would "
        "could can is are was were do does did please hi hello hey thanks thank ok yes no"
    )
)

# After a sentence-initial capitalised word, these mark it as a verb ("Echo the text"),
# not a place ("Lhasa weather").
_OBJECT_WORDS = frozenset(
    lx.words(
        "the a an this that these those me my your it its us our him her them some all any "
        "to back out up down every each"
    )
)
_CAPITALISED_RE = re.compile(r"[A-Z][a-zà-ÿ]+(?:[ -][A-Z][a-zà-ÿ]+)*")

# "e.g. 北京, Paris": examples in a description are values, not the tool's own vocabulary.
_EXAMPLES_RE = re.compile(r"(?:e\.g\.?|eg\.|例如|比如|such as|for example)[^;；。)）\n]*", re.I)

# World-knowledge words that name things, never places: units, currencies, enum synonyms.
_NAMING_WORDS = frozenset(
    s
    for table in (lx.UNITS, lx.CURRENCIES, lx.ENUM_SYNONYMS, lx.EXTREMES)
    for ss in table.values()
    for s in ss
)


def tool_terms(tools: Sequence[ToolSpec]) -> frozenset[str]:
    """Words the tools use of themselves: their names, parameter names and (for Chinese) the
    words of their descriptions. The tools' own vocabulary is never a place."""
    terms: set[str] = set()
    for spec in tools:
        terms |= set(split_identifier(spec.name))
        texts = [spec.description]
        for name, schema in properties(spec).items():
            terms |= set(split_identifier(name))
            texts.append(str(schema.get("description", "")))
        for text in texts:
            cjk = re.findall(r"[\u3400-\u9fff]{2,}", _EXAMPLES_RE.sub(" ", text))
            terms |= {t for t in cjk if lx.place_named(t) is None}
    return frozenset(terms)


def find_places(text: str, terms: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """Place names in order of mention: the gazetteer first, then names that look like places."""
    spans = gazetteer_spans(text)
    spans += unknown_english_places(text, spans, terms)
    spans += unknown_cjk_places(text, spans, terms)
    return tuple(dict.fromkeys(name for _, name in sorted(spans)))


def gazetteer_spans(text: str) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for place in lx.PLACES:
        for name in (place.zh, place.en, *place.aliases):
            pattern = (
                re.escape(name) if lx.has_cjk(name) else rf"(?<![A-Za-z]){re.escape(name)}(?![a-z])"
            )
            flags = 0 if lx.has_cjk(name) else re.IGNORECASE
            found += [(m.start(), m.group()) for m in re.finditer(pattern, text, flags)]
    # "New York" also contains "York"-like shorter hits elsewhere; keep the longest at a spot.
    covered = covered_spans(found)
    return [s for s in found if (s[0], s[0] + len(s[1])) not in covered]


def covered_spans(found: Sequence[tuple[int, str]]) -> set[tuple[int, int]]:
    """The (start, end) of each span that lies inside another: one sweep in order of start,
    longest first, so many names cost no more than sorting them."""
    spans = sorted({(start, start + len(name)) for start, name in found}, key=by_start_longest)
    covered: set[tuple[int, int]] = set()
    furthest = -1
    for start, end in spans:
        if end <= furthest:  # an earlier span starts no later and ends no sooner
            covered.add((start, end))
        furthest = max(furthest, end)
    return covered


def by_start_longest(span: tuple[int, int]) -> tuple[int, int]:
    return span[0], -span[1]


def unknown_english_places(
    text: str, known: list[tuple[int, str]], terms: frozenset[str] = frozenset()
) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    overlaps = overlap_finder(known)
    for match in _CAPITALISED_RE.finditer(text):
        words = [w for w in re.split(r"[ -]", match.group()) if not is_common_word(w, terms)]
        if not words or overlaps(*match.span()) or is_leading_verb(text, match):
            continue
        name = " ".join(words)
        found.append((match.start() + match.group().find(words[0]), name))
    return found


def overlap_finder(known: Sequence[tuple[int, str]]) -> Callable[[int, int], bool]:
    """Whether a span (start, end) overlaps any known one: a binary search over the known spans
    in order of start, with the furthest end reached so far, rather than a scan of them all."""
    spans = sorted((start, start + len(name)) for start, name in known)
    starts = [start for start, _ in spans]
    furthest = list(itertools.accumulate((end for _, end in spans), max))

    def overlaps(start: int, end: int) -> bool:
        before = bisect.bisect_left(starts, end)  # the known spans that start before `end`
        return before > 0 and furthest[before - 1] > start

    return overlaps


_SENTENCE_ENDS = ".!?。！？;；"
_FOLLOWING_WORD_RE = re.compile(r"\s+([a-z']+)")


def is_leading_verb(text: str, match: re.Match[str]) -> bool:
    """A capitalised word opening a sentence and followed by an object is an imperative verb:
    "Echo the text ...", "Translate this ..."."""
    # Looks back over the spaces before the word only: each run of them belongs to one word.
    before = match.start()
    while before > 0 and text[before - 1].isspace():
        before -= 1
    opens_sentence = before == 0 or text[before - 1] in _SENTENCE_ENDS
    following = _FOLLOWING_WORD_RE.match(text, match.end())
    return (
        opens_sentence
        and " " not in match.group()
        and following is not None
        and following.group(1) in _OBJECT_WORDS
    )


def is_common_word(word: str, terms: frozenset[str] = frozenset()) -> bool:
    lowered = word.lower()
    return (
        lowered in lx.NOISE_WORDS
        or lowered in _ALL_TERMS
        or lowered in _NOT_PLACES
        or lowered in _NAMING_WORDS
        or lowered in terms
    )


def unknown_cjk_places(
    text: str, known: list[tuple[int, str]], terms: frozenset[str] = frozenset()
) -> list[tuple[int, str]]:
    """CJK runs left after removing known names, lexicon terms, the tools' own words, unit
    and currency names, and function words."""
    masked = list(text)
    for start, name in known:
        masked[start : start + len(name)] = [" "] * len(name)
    vocabulary = (
        {t for ts in lx.CONCEPTS.values() for t in ts}
        | set(lx.CJK_FUNCTION_WORDS)
        | _NAMING_WORDS
        | terms
    )
    strip_terms = sorted(
        (t for t in vocabulary if lx.has_cjk(t)), key=lambda term: (-len(term), term)
    )
    joined = "".join(masked)
    for term in strip_terms:
        joined = joined.replace(term, " " * len(term))
    found: list[tuple[int, str]] = []
    for match in re.finditer(r"[\u3400-\u9fff]{2,6}", joined):
        found.append((match.start(), match.group()))
    return found
