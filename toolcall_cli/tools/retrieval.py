"""Ranking tools against a question: BM25 over each tool's words (lexical), or the cosine of
embedding vectors (embed), so a request can carry the relevant few of hundreds of tools."""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from toolcall_cli.messages import ToolSpec
from toolcall_cli.tools._bilingual_terms import TERMS
from toolcall_cli.tools._english_terms import SHAPES, SYMBOLS, SYNONYMS

Query = Sequence[tuple[str, float]]
"""Texts to rank against, each with its weight: the question at 1, the latest turn lower."""


class RankingFailed(Exception):
    """A ranker could not rank (the embeddings endpoint failed): one line, and the caller ranks
    lexically instead."""


class Ranker(Protocol):
    """Scores every spec against a query; a higher score is a better match."""

    @property
    def name(self) -> str: ...

    def scores(self, query: Query, specs: Sequence[ToolSpec]) -> list[float]: ...


# --- words ------------------------------------------------------------------------------------

# CJK ideographs (unified, extension A, compatibility): runs of these are cut into characters
# and bigrams, since Chinese writes no spaces between words.
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_PIECES = re.compile(rf"[{_CJK}]+|[A-Za-z0-9]+")
_CJK_RUN = re.compile(rf"[{_CJK}]+")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")

_STOPWORD_TEXT = """
a an the of in on at to for from by with and or is are was be it its this that what which who
whom how much many me my i you your we our do does can could would should please tell give get
show find there their them as if any some than then into about
的 了 吗 呢 吧 是 我 你 他 她 它 们 在 和 与 请 帮 把 个 一 这 那 有 多 少 么 什
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
"""Words too common to say which tool is meant. `get`, `show` and `find` start most tool names
and questions alike, so they are noise too."""


@functools.lru_cache(maxsize=1)
def _english_stemmer() -> Any:
    import snowballstemmer  # type: ignore[import-untyped, unused-ignore]

    return snowballstemmer.stemmer("english")


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Snowball (Porter 2) English stem, so `borrowing` finds `borrow`, `payments` finds
    `payment` and `decoded` finds `decode`: the tool and the question rarely use one form."""
    return str(_english_stemmer().stemWord(word))


def latin_words(text: str) -> list[str]:
    """Lower-cased words, snake_case and camelCase split: `getWeather_now` → get weather now."""
    words: list[str] = []
    for piece in re.findall(r"[A-Za-z0-9]+", text):
        words.extend(part.lower() for part in _CAMEL.findall(piece))
    return words


def cjk_terms(run: str) -> list[str]:
    """A run of Chinese characters as its characters and its overlapping bigrams."""
    return list(run) + [run[i : i + 2] for i in range(len(run) - 1)]


_SYMBOL = re.compile("|".join(map(re.escape, sorted(SYMBOLS, key=len, reverse=True))))


def value_words(text: str) -> str:
    """The words for the symbols and the kinds of value `text` writes without words:
    `17.5% + 96` → percent plus add arithmetic expression (see _english_terms)."""
    words = [SYMBOLS[symbol] for symbol in _SYMBOL.findall(text)]
    words += [kind for shape, kind in SHAPES for _ in shape.finditer(text)]
    return " ".join(words)


def tokens(text: str) -> list[str]:
    """The terms BM25 counts: stemmed Latin words, CJK characters and bigrams, and the words
    for the text's symbols and values (value_words)."""
    return word_tokens(f"{text}\n{value_words(text)}")


def word_tokens(text: str) -> list[str]:
    terms: list[str] = []
    for piece in _PIECES.findall(text):
        if _CJK_RUN.fullmatch(piece):
            terms.extend(cjk_terms(piece))
        else:
            # One letter says nothing of a tool (the `s` of "what's", the `a` of a list).
            terms.extend(stem(word) for word in latin_words(piece) if len(word) > 1)
    return [term for term in terms if term not in STOPWORDS]


def bridged(text: str, table: Mapping[str, str] = TERMS) -> list[str]:
    """English words for the Chinese words of `text` the table knows, longest match first, so
    `空气质量` is read as one word and not also as `空气`."""
    longest = max((len(key) for key in table), default=0)
    words: list[str] = []
    for run in _CJK_RUN.findall(text):
        i = 0
        while i < len(run):
            for size in range(min(longest, len(run) - i), 0, -1):
                english = table.get(run[i : i + size])
                if english is not None:
                    words.append(english)
                    i += size
                    break
            else:
                i += 1
    return word_tokens(" ".join(words))


SYNONYM_WEIGHT = 0.5
"""A synonym counts half as much as the word the user wrote: it is a guess at their meaning."""


@functools.lru_cache(maxsize=1)
def _synonyms_by_stem() -> dict[str, list[str]]:
    return {stem(word): word_tokens(others) for word, others in SYNONYMS.items()}


def synonyms(terms: Iterable[str]) -> list[str]:
    """The terms the English thesaurus table (_english_terms.SYNONYMS) gives for `terms`."""
    table = _synonyms_by_stem()
    return [other for term in terms for other in table.get(term, [])]


def query_terms(query: Query) -> dict[str, float]:
    """Each term of the query with its weight: the highest weight among the texts holding it.
    Synonyms of its words count SYNONYM_WEIGHT as much as the words themselves."""
    weights: dict[str, float] = {}

    def add(terms: Iterable[str], weight: float) -> None:
        for term in terms:
            weights[term] = max(weights.get(term, 0.0), weight)

    for text, weight in query:
        said = [*tokens(text), *bridged(text)]
        add(said, weight)
        add(synonyms(said), weight * SYNONYM_WEIGHT)
    return weights


def parameter_text(spec: ToolSpec) -> str:
    """Each parameter's name and description, and enum values (`unit: celsius, fahrenheit`)."""
    parts: list[str] = []
    properties = spec.parameters.get("properties")
    if isinstance(properties, dict):
        for name, schema in properties.items():
            parts.append(" ".join(latin_words(str(name))))
            if isinstance(schema, dict):
                parts.append(str(schema.get("description") or ""))
                enum = schema.get("enum")
                if isinstance(enum, list):
                    parts.append(" ".join(str(value) for value in enum))
    return "\n".join(part for part in parts if part)


def spec_text(spec: ToolSpec) -> str:
    """What a tool says of itself, as text: its name split into words, its description, and
    its parameters (see parameter_text): what the embed ranker embeds."""
    parts = [" ".join(latin_words(spec.name)), spec.description, parameter_text(spec)]
    return "\n".join(part for part in parts if part)


Fields = dict[str, Counter[str]]
"""A tool's terms by field: its name, its description, its parameters."""


def spec_fields(spec: ToolSpec) -> Fields:
    """A tool's terms by field, worked out once per spec text: every request ranks every tool,
    and tokenising 200 specs each time cost ~80 ms a request, nearly all of ranking."""
    return _fields_of(spec.name, spec.description, parameter_text(spec))


@functools.lru_cache(maxsize=4096)
def _fields_of(name: str, description: str, parameters: str) -> Fields:
    return {
        "name": Counter(tokens(" ".join(latin_words(name)))),
        "description": Counter(tokens(description)),
        "parameters": Counter(tokens(parameters)),
    }


def spec_terms(spec: ToolSpec) -> list[str]:
    """Every term a tool holds, in any field: what `toolcall tools --rank` shows as matched."""
    return [term for field in spec_fields(spec).values() for term in field]


# --- BM25F ------------------------------------------------------------------------------------

FIELD_WEIGHTS: Mapping[str, float] = {"name": 3.0, "description": 1.0, "parameters": 1.0}
"""How much a term counts in each field: the name is the tool's most deliberate summary of what
it does, so a word there counts three times one in the description or the parameters."""


@dataclass(frozen=True)
class BM25:
    """BM25F (Robertson and Zaragoza): each field's term frequency, normalised by that field's
    length against its average and weighted, summed into one frequency that BM25 saturates
    (k1 1.2, b 0.75)."""

    k1: float = 1.2
    b: float = 0.75
    weights: Mapping[str, float] = dataclasses.field(default_factory=lambda: dict(FIELD_WEIGHTS))
    name: str = "lexical"

    def scores(self, query: Query, specs: Sequence[ToolSpec]) -> list[float]:
        documents = [spec_fields(spec) for spec in specs]
        return bm25f_scores(query_terms(query), documents, self.weights, self.k1, self.b)


def bm25f_scores(
    terms: Mapping[str, float],
    documents: Sequence[Fields],
    weights: Mapping[str, float],
    k1: float,
    b: float,
) -> list[float]:
    if not documents:
        return []
    count = len(documents)
    lengths = [{field: sum(doc[field].values()) for field in weights} for doc in documents]
    average = {field: sum(length[field] for length in lengths) / count or 1.0 for field in weights}
    holding = Counter(term for doc in documents for term in set().union(*doc.values()))
    scores = []
    for doc, length in zip(documents, lengths, strict=True):
        # Each field's length against its average, worked out once per document, not per term.
        norms = {field: 1 - b + b * length[field] / average[field] for field in weights}
        score = 0.0
        for term, weight in terms.items():
            frequency = sum(
                weights[field] * doc[field][term] / norms[field]
                for field in weights
                if doc[field][term]
            )
            if not frequency:
                continue
            idf = math.log(1 + (count - holding[term] + 0.5) / (holding[term] + 0.5))
            score += weight * idf * frequency * (k1 + 1) / (frequency + k1)
        scores.append(score)
    return scores


LEXICAL = BM25()


# --- embeddings -------------------------------------------------------------------------------

Embed = Callable[[list[str]], list[list[float]]]
"""Texts in, one vector each out (an embeddings endpoint); raises on failure."""


class VectorStore(Protocol):
    """Vectors of tool specs kept between runs, by the spec's hash (see embed_cache)."""

    def get(self, key: str) -> list[float] | None: ...

    def put(self, vectors: Mapping[str, list[float]]) -> None: ...


class MemoryVectors(dict[str, list[float]]):
    """A VectorStore that forgets at exit: for a session without a state directory, and tests."""

    def put(self, vectors: Mapping[str, list[float]]) -> None:
        self.update(vectors)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    size = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / size if size else 0.0


class EmbedRanker:
    """Cosine similarity between the query's vector and each tool's, the tools' vectors cached
    by spec hash and model, so a tool is embedded once until its spec changes."""

    name = "embed"

    def __init__(self, embed: Embed, model: str, store: VectorStore | None = None) -> None:
        self._embed = embed
        self._model = model
        self._store: VectorStore = store if store is not None else MemoryVectors()
        self._told = False

    def cache_problem(self) -> str | None:
        """Why the tool vectors could not be kept (read or written), the first time it is
        asked: ranking goes on, only slower, but the user should hear why once."""
        problem = getattr(self._store, "problem", None)
        if problem is None or self._told:
            return None
        self._told = True
        return str(problem)

    def scores(self, query: Query, specs: Sequence[ToolSpec]) -> list[float]:
        tool_vectors = self._tool_vectors(specs)
        texts = [text for text, _ in query if text.strip()]
        query_vectors = self._call(texts) if texts else []
        weights = [weight for text, weight in query if text.strip()]
        return [
            sum(w * cosine(q, v) for q, w in zip(query_vectors, weights, strict=True))
            for v in tool_vectors
        ]

    def _tool_vectors(self, specs: Sequence[ToolSpec]) -> list[list[float]]:
        from toolcall_cli.tools.embed_cache import spec_hash

        keys = [spec_hash(spec, self._model) for spec in specs]
        known = {key: self._store.get(key) for key in keys}
        missing = [i for i, key in enumerate(keys) if known[key] is None]
        if missing:
            fresh = self._call([spec_text(specs[i]) for i in missing])
            new = {keys[i]: vector for i, vector in zip(missing, fresh, strict=True)}
            self._store.put(new)
            known.update(new)
        return [known[key] or [] for key in keys]

    def _call(self, texts: list[str]) -> list[list[float]]:
        try:
            vectors = self._embed(texts)
        except Exception as error:  # whatever the endpoint did, it is one line to the user
            raise RankingFailed(f"the embeddings request failed: {error}") from None
        if len(vectors) != len(texts):
            raise RankingFailed(
                f"the embeddings endpoint gave {len(vectors)} vectors for {len(texts)} texts"
            )
        return vectors


# --- ranking ----------------------------------------------------------------------------------


def ranked(query: Query, specs: Sequence[ToolSpec], ranker: Ranker = LEXICAL) -> list[Scored]:
    """Every spec's name and score, best first; ties keep the registry's order."""
    scores = ranker.scores(query, specs)
    order = sorted(range(len(specs)), key=lambda i: -scores[i])
    return [Scored(specs[i].name, round(scores[i], 4)) for i in order]


@dataclass(frozen=True)
class Scored:
    name: str
    score: float


def rank(
    query: str, specs: Iterable[ToolSpec], k: int, ranker: Ranker = LEXICAL
) -> list[tuple[str, float]]:
    """The top `k` tools for a question, as (name, score), best first: for bench and
    `toolcall tools --rank`. Raises RankingFailed when an embed ranker cannot reach its
    endpoint."""
    return [(s.name, s.score) for s in ranked([(query, 1.0)], list(specs), ranker)[:k]]
