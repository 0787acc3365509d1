"""Working with text: counts, case styles, similarity, extraction, readability, diffs."""

from __future__ import annotations

import difflib
import re
import textwrap
import unicodedata
from collections import Counter
from html.parser import HTMLParser
from typing import Any, Literal

from toolcall_cli import tool

_WORD = re.compile(r"[A-Za-z0-9']+|[\u4e00-\u9fff]")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_URL = re.compile(r"https?://[^\s<>\"')\]]+")
_STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "from",
        "has",
        "have",
        "i",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "were",
        "will",
        "with",
        "you",
        "your",
        "we",
        "they",
        "he",
        "she",
        "not",
    ]
)


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


@tool(permission="read")
def word_count(text: str) -> dict[str, Any]:
    """Count words, characters, sentences and paragraphs in a text (字数统计).
    中文：字数统计。

    Args:
        text: The text to count; Chinese characters count one word each.
    """
    sentences = [s for s in re.split(r"[.!?。！？]+", text) if s.strip()]
    paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    return {
        "words": len(_words(text)),
        "characters": len(text),
        "characters_no_spaces": len(re.sub(r"\s", "", text)),
        "sentences": len(sentences),
        "paragraphs": len(paragraphs),
    }


@tool(permission="read")
def reading_time(text: str, words_per_minute: int = 230) -> dict[str, Any]:
    """How long a piece of writing takes to read and to speak aloud.
    中文：阅读时长。

    Args:
        text: The article or speech.
        words_per_minute: Silent reading speed; speaking is taken as 150 per minute.
    """
    words = len(_words(text))
    return {
        "words": words,
        "reading_minutes": round(words / words_per_minute, 1),
        "speaking_minutes": round(words / 150, 1),
    }


@tool(permission="read")
def slugify(text: str, separator: str = "-") -> dict[str, Any]:
    """Make a URL slug from a title: lower case ASCII, accents removed, words joined by hyphens.
    中文：URL别名、标题转链接。

    Args:
        text: The title, e.g. "Crème Brûlée: A Recipe!".
        separator: What joins the words.
    """
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    return {"slug": separator.join(words)}


@tool(permission="read")
def change_case(
    text: str, style: Literal["snake", "camel", "pascal", "kebab", "constant", "title", "sentence"]
) -> dict[str, Any]:
    """Rewrite an identifier or phrase in another case style: snake_case, camelCase, kebab-case...
    中文：命名风格转换、驼峰下划线。

    Args:
        text: The words, in any style ("user id", "userId", "USER_ID").
        style: The target style.
    """
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    words = [w.lower() for w in re.split(r"[\s_\-]+", spaced) if w]
    styles = {
        "snake": "_".join(words),
        "camel": words[0] + "".join(w.title() for w in words[1:]) if words else "",
        "pascal": "".join(w.title() for w in words),
        "kebab": "-".join(words),
        "constant": "_".join(words).upper(),
        "title": " ".join(w.title() for w in words),
        "sentence": " ".join(words).capitalize(),
    }
    return {"result": styles[style]}


@tool(permission="read")
def palindrome_check(text: str) -> dict[str, Any]:
    """Whether a word or phrase reads the same backwards, ignoring case, spaces and punctuation.
    中文：回文判断。

    Args:
        text: The word or phrase, e.g. "A man, a plan, a canal: Panama".
    """
    letters = [c.lower() for c in text if c.isalnum()]
    return {"palindrome": bool(letters) and letters == letters[::-1], "letters": len(letters)}


@tool(permission="read")
def anagram_check(first: str, second: str) -> dict[str, Any]:
    """Whether two words or phrases use exactly the same letters (anagrams).
    中文：变位词、字母相同。

    Args:
        first: The first word or phrase.
        second: The second word or phrase.
    """

    def letters(s: str) -> Counter[str]:
        return Counter(c.lower() for c in s if c.isalnum())

    a, b = letters(first), letters(second)
    return {
        "anagram": a == b,
        "missing_from_second": "".join(sorted((a - b).elements())),
        "extra_in_second": "".join(sorted((b - a).elements())),
    }


@tool(permission="read")
def edit_distance(first: str, second: str) -> dict[str, Any]:
    """Levenshtein edit distance: the fewest insertions, deletions and substitutions.
    中文：编辑距离、改几个字符。

    Args:
        first: The first string.
        second: The second string.
    """
    previous = list(range(len(second) + 1))
    for i, a in enumerate(first, 1):
        current = [i]
        for j, b in enumerate(second, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a != b)))
        previous = current
    return {"distance": previous[-1]}


@tool(permission="read")
def text_similarity(first: str, second: str) -> dict[str, Any]:
    """How similar two texts are, as a ratio from 0 to 1 (sequence matching), and word overlap.
    中文：文本相似度、查重。

    Args:
        first: The first text.
        second: The second text.
    """
    ratio = difflib.SequenceMatcher(None, first, second).ratio()
    a, b = {w.lower() for w in _words(first)}, {w.lower() for w in _words(second)}
    jaccard = len(a & b) / len(a | b) if a | b else 1.0
    return {"ratio": round(ratio, 4), "word_jaccard": round(jaccard, 4)}


@tool(permission="read")
def extract_emails_and_links(text: str) -> dict[str, Any]:
    """Pull every email address and http(s) link out of a block of text, without duplicates.
    中文：提取邮箱地址和网页链接。

    Args:
        text: The text to scan, e.g. a pasted email thread.
    """
    emails = list(dict.fromkeys(_EMAIL.findall(text)))
    links = list(dict.fromkeys(u.rstrip(".,;:") for u in _URL.findall(text)))
    return {"emails": emails, "links": links}


@tool(permission="read")
def keyword_frequency(text: str, top: int = 10, skip_common_words: bool = True) -> dict[str, Any]:
    """The most frequent words of a text, for keywords or a word cloud.
    中文：词频统计。

    Args:
        text: The text.
        top: How many words to return.
        skip_common_words: Leave out English stop words such as "the" and "and".
    """
    words = [w.lower() for w in _words(text)]
    if skip_common_words:
        words = [w for w in words if w not in _STOP_WORDS]
    return {"top": [{"word": w, "count": c} for w, c in Counter(words).most_common(top)]}


def _syllables(word: str) -> int:
    groups = re.findall(r"[aeiouy]+", word.lower())
    count = len(groups) - (1 if word.lower().endswith("e") and len(groups) > 1 else 0)
    return max(count, 1)


@tool(permission="read")
def readability_score(text: str) -> dict[str, Any]:
    """Flesch reading ease and Flesch-Kincaid grade level of English text.
    中文：可读性、难易程度。

    Args:
        text: English prose, several sentences long.
    """
    words = re.findall(r"[A-Za-z']+", text)
    sentences = max(len([s for s in re.split(r"[.!?]+", text) if s.strip()]), 1)
    if not words:
        raise ValueError("no English words found")
    syllables = sum(_syllables(w) for w in words)
    per_sentence, per_word = len(words) / sentences, syllables / len(words)
    ease = 206.835 - 1.015 * per_sentence - 84.6 * per_word
    grade = 0.39 * per_sentence + 11.8 * per_word - 15.59
    return {"reading_ease": round(ease, 1), "grade_level": round(grade, 1)}


@tool(permission="read")
def wrap_text(text: str, width: int = 72) -> dict[str, Any]:
    """Re-flow text into lines no wider than a given number of characters.
    中文：自动换行、折行。

    Args:
        text: The text to wrap; blank lines separate paragraphs.
        width: The maximum line width.
    """
    paragraphs = [textwrap.fill(" ".join(p.split()), width) for p in re.split(r"\n\s*\n", text)]
    return {"text": "\n\n".join(paragraphs)}


@tool(permission="read")
def deduplicate_lines(text: str, ignore_case: bool = False, sort: bool = False) -> dict[str, Any]:
    """Remove repeated lines from a list, keeping the first of each, optionally sorted.
    中文：去重、删除重复行。

    Args:
        text: One item per line.
        ignore_case: Treat lines that differ only in case as the same.
        sort: Sort the remaining lines alphabetically.
    """
    seen: set[str] = set()
    kept = []
    for line in text.splitlines():
        key = line.casefold() if ignore_case else line
        if key not in seen:
            seen.add(key)
            kept.append(line)
    if sort:
        kept.sort(key=str.casefold)
    return {"text": "\n".join(kept), "removed": len(text.splitlines()) - len(kept)}


@tool(permission="read")
def text_diff(before: str, after: str) -> dict[str, Any]:
    """A unified diff between two versions of a text, line by line, like `diff -u`.
    中文：文本差异对比。

    Args:
        before: The original text.
        after: The changed text.
    """
    diff = difflib.unified_diff(
        before.splitlines(), after.splitlines(), "before", "after", lineterm=""
    )
    lines = list(diff)
    added = sum(1 for l in lines if l.startswith("+") and not l.startswith("+++"))  # noqa: E741
    removed = sum(1 for l in lines if l.startswith("-") and not l.startswith("---"))  # noqa: E741
    return {"diff": "\n".join(lines), "added": added, "removed": removed}


class _TextOnly(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self._skip += 1
        if tag in ("p", "br", "div", "li", "h1", "h2", "h3", "tr"):
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style") and self._skip:
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


@tool(permission="read")
def strip_html_tags(html: str) -> dict[str, Any]:
    """Plain text from an HTML snippet: tags, scripts and styles removed, entities decoded.
    中文：去掉HTML标签、网页转纯文本。

    Args:
        html: The HTML source.
    """
    parser = _TextOnly()
    parser.feed(html)
    parser.close()
    text = re.sub(r"[ \t]+", " ", "".join(parser.parts))
    return {"text": "\n".join(line.strip() for line in text.splitlines() if line.strip())}


@tool(permission="read")
def truncate_text(text: str, max_characters: int, ellipsis: str = "…") -> dict[str, Any]:
    """Shorten text to a maximum length at a word boundary, adding an ellipsis (for previews).
    中文：截断文本、省略号。

    Args:
        text: The text.
        max_characters: The longest result allowed, ellipsis included.
        ellipsis: What marks the cut.
    """
    if len(text) <= max_characters:
        return {"text": text, "truncated": False}
    room = max(max_characters - len(ellipsis), 0)
    cut = text[:room]
    if " " in cut and not text[room].isspace():
        cut = cut.rsplit(" ", 1)[0]
    return {"text": cut.rstrip() + ellipsis, "truncated": True}
