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
    """Count the words, characters (with and without spaces), sentences and paragraphs of a text.
    Use it for essay or article length limits and 'how many words is this'. For Chinese
    character counts in mixed text use count_chinese_characters; for reading time use
    reading_time.
    中文：字数统计、数字数、字符数、多少个词。

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
    """How long a text takes to read silently and to speak aloud, from its word count at a
    reading speed. Use it for 'how long will this speech or article take'. For the word count
    itself use word_count.
    中文：阅读时长、演讲时间、读完要多久、朗读时间。

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
    """Make a URL slug from a title: lower-case ASCII, accents removed, words joined by hyphens.
    Use it for blog post permalinks, file names and SEO-friendly URLs. For identifier case
    styles use change_case.
    中文：URL别名、标题转链接、固定链接、网址短名。

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
    """Rewrite an identifier or phrase in another case style: snake_case, camelCase, PascalCase,
    kebab-case, CONSTANT_CASE, Title Case and Sentence case. Use it for renaming variables or
    fixing capitalisation. For URL slugs use slugify.
    中文：命名风格转换、驼峰命名、下划线命名、大小写转换。

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
    """Whether a word, number or phrase reads the same backwards and forwards, ignoring case,
    spaces and punctuation. Use it for palindrome puzzles. For same-letters checks use
    anagram_check.
    中文：回文判断、回文、正读反读一样。

    Args:
        text: The word or phrase, e.g. "A man, a plan, a canal: Panama".
    """
    letters = [c.lower() for c in text if c.isalnum()]
    return {"palindrome": bool(letters) and letters == letters[::-1], "letters": len(letters)}


@tool(permission="read")
def anagram_check(first: str, second: str) -> dict[str, Any]:
    """Whether two words or phrases are anagrams, using exactly the same letters rearranged. Use
    it for word games and puzzles. For how different two strings are use edit_distance.
    中文：变位词、字母异位词、字母相同、换位词。

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
    """Levenshtein edit distance between two strings: the fewest single-character insertions,
    deletions and substitutions to turn one into the other. Use it for typos, spelling
    suggestions and fuzzy matching. For an overall similarity ratio use text_similarity.
    中文：编辑距离、Levenshtein、改几个字符、拼写差异。

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
    """How similar two texts are as a ratio from 0 to 1 (sequence matching), with word overlap.
    Use it for near-duplicate checks, comparing answers or rough plagiarism checks. For the
    exact line changes use text_diff.
    中文：文本相似度、查重、相似程度、抄袭检测。

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
    """Pull every email address and http(s) URL out of a block of text, without duplicates. Use
    it to collect contacts or links from a page, email or document. To hide them instead use
    redact_personal_data.
    中文：提取邮箱、提取链接、抓取网址、找出邮件地址。

    Args:
        text: The text to scan, e.g. a pasted email thread.
    """
    emails = list(dict.fromkeys(_EMAIL.findall(text)))
    links = list(dict.fromkeys(u.rstrip(".,;:") for u in _URL.findall(text)))
    return {"emails": emails, "links": links}


@tool(permission="read")
def keyword_frequency(text: str, top: int = 10, skip_common_words: bool = True) -> dict[str, Any]:
    """The most frequent words of a text with their counts, optionally skipping common stop
    words. Use it for keyword extraction, word clouds and 'which words appear most'. For totals
    use word_count.
    中文：词频统计、关键词提取、高频词、词云。

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
    """Flesch reading ease and Flesch-Kincaid grade level of English text: how easy it is to read
    and the school grade it suits. Use it to check plain-language writing. It does not work on
    Chinese text.
    中文：可读性、难易程度、文章难度、阅读等级。

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
    """Re-flow text into lines no wider than a given number of characters (hard wrap). Use it for
    fixed-width emails, commit messages or terminal output. For cutting text short use
    truncate_text.
    中文：自动换行、折行、每行字数、文本排版。

    Args:
        text: The text to wrap; blank lines separate paragraphs.
        width: The maximum line width.
    """
    paragraphs = [textwrap.fill(" ".join(p.split()), width) for p in re.split(r"\n\s*\n", text)]
    return {"text": "\n\n".join(paragraphs)}


@tool(permission="read")
def deduplicate_lines(text: str, ignore_case: bool = False, sort: bool = False) -> dict[str, Any]:
    """Remove repeated lines from a list, keeping the first of each, optionally ignoring case and
    sorting. Use it to clean up lists of names, emails or keywords. It does not compare two
    texts; use text_diff.
    中文：去重、删除重复行、列表去重、重复数据。

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
    """A unified diff between two versions of a text, line by line, like diff -u, showing what
    was added and removed. Use it to compare drafts, configs or code. For a single similarity
    score use text_similarity.
    中文：文本差异对比、比较两段文字、diff、改了哪里。

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
    """Plain text from an HTML snippet: tags, scripts and styles removed, entities decoded. Use
    it to clean copied web content or email HTML. To escape text for HTML use html_escape.
    中文：去掉HTML标签、网页转纯文本、清除格式。

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
    """Shorten text to a maximum length at a word boundary, adding an ellipsis, for previews,
    titles and summaries. Use it for character limits on tweets, cards or notifications. For
    line wrapping use wrap_text.
    中文：截断文本、省略号、字数限制、缩短文字。

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
