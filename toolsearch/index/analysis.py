"""Text analysis for tool search: identifier splitting, stopwords, stemming.

Tool catalogs are full of identifiers (`get_user_profile`, `getUserProfile`, `flight.book`,
`getPM2_5Level`), which a plain word tokenizer keeps as one opaque token. Here every identifier-like
chunk of text is split on snake_case, camelCase, kebab-case, dots and letter/digit boundaries, and the
whole chunk is kept as well in one canonical spelling (parts joined by `_`), so `getUserProfile`,
`get-user-profile` and `get_user_profile` all produce the same compound term and an exact name in a query
scores above a loose match of its parts.

Then the chain whoosh's `StemmingAnalyzer` uses: lowercase, stopwords (whoosh's list, tokens shorter than 2
characters dropped) and stemming. We stem with the Snowball English stemmer (`whoosh.lang.porter2`):
whoosh's default `porter` turns "running" into "runn" and "was" into "wa". `stemmer.stem` is that
function, ported to run about twice as fast (a test compares the two on every catalog word).

Any language: accents are folded first (`café` = `cafe`, `Größe` = `grosse`: NFKD without combining marks,
then casefold), so a query typed without accents finds a description written with them. Text written
without spaces (Chinese, Japanese kana and kanji, Korean hangul) would otherwise be one giant token per
sentence; each run of such characters is indexed as its overlapping character bigrams (`查询天气` ->
`查询 询天 天气`), or as the character itself when the run is one character long, the scheme of Lucene's
CJKBigramFilter. Queries are analyzed the same way, so `天气` matches a description containing `查询天气预报`.
A bigram that spans two words (`询天`) is noise the index mostly does not know; the searcher leaves such
unknown bigrams out of its no-good-match verdict (`is_cjk`).

Two implementations of one analysis:
- `toolsearch.index.chain.identifier_analyzer()` is a real whoosh analyzer chain (for whoosh schemas and
  whoosh tooling; a separate module because importing whoosh.analysis costs ~130 ms);
- `analyze()` is the same computation without whoosh's per-token generator overhead, with caches for
  chunk splitting and stemming; it is what index building and every search use (a 10k-tool build runs
  about a million tokens through it). A test keeps the two identical.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from itertools import chain
from typing import Iterator

from .stemmer import stem as _porter2

__all__ = [
    "ANALYSIS_ID",
    "FILLER_WORDS",
    "STOP_WORDS",
    "analyze",
    "fold",
    "is_cjk",
    "is_compound",
    "query_terms",
    "split_clauses",
    "split_identifier",
]

# Bump when the output of `analyze` changes: a persisted index built by another analysis is rebuilt.
ANALYSIS_ID = "fold/cjk-bigram/ident-split+compound/lower/stop(whoosh,min2)/porter2 v2"

# whoosh.analysis.STOP_WORDS, copied so that searching never imports whoosh.analysis (~130 ms).
STOP_WORDS = frozenset(
    "a an and are as at be by can for from have if in is it may not of on or tbd that the this to us we "
    "when will with yet you your".split()
)
MIN_SIZE = 2

# An identifier-like chunk: runs of letters/digits joined by `_`, `-` or `.` (a trailing dot is prose).
_CHUNK = re.compile(r"[^\W_]+(?:[_.\-]+[^\W_]+)*")
_SEPARATORS = re.compile(r"[_.\-]+")
# Word boundaries inside one piece: fooBar | HTTPServer -> HTTP Server | abc123 | 123abc.
_CASE_BOUNDARY = re.compile(
    r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[^\W\d_])(?=\d)|(?<=\d)(?=[^\W\d_])"
)


# Scripts written without spaces between words: CJK ideographs (+ extension A, compatibility), kana,
# hangul syllables, halfwidth kana. Each run of them becomes character bigrams.
_CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff66-\uff9f"
_CJK_RUN = re.compile(f"[{_CJK_CHARS}]+")
_HAS_CJK = re.compile(f"[{_CJK_CHARS}]")
_COMBINING = re.compile(r"[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")


@lru_cache(maxsize=200_000)
def fold(text: str) -> str:
    """Accents folded, case kept: `Café` -> `Cafe`, `Größe` -> `Grosse` (ß, like casefold, is ss).

    Case is kept because camelCase splitting happens afterwards. NFKD also maps full-width letters to
    ASCII (`ＡＢＣ` -> `ABC`); it would split a hangul syllable into jamo, so CJK text is left as it is."""
    if text.isascii():
        return text
    if _HAS_CJK.search(text):
        return "".join(part if _HAS_CJK.match(part) else _fold_plain(part) for part in _split_cjk(text))
    return _fold_plain(text)


def _fold_plain(text: str) -> str:
    return _COMBINING.sub("", unicodedata.normalize("NFKD", text)).replace("ß", "ss")


def _split_cjk(text: str) -> list[str]:
    """`text` cut into alternating CJK runs and other pieces, in order."""
    pieces, last = [], 0
    for m in _CJK_RUN.finditer(text):
        if m.start() > last:
            pieces.append(text[last:m.start()])
        pieces.append(m.group())
        last = m.end()
    if last < len(text):
        pieces.append(text[last:])
    return pieces


def is_cjk(term: str) -> bool:
    """Whether an analyzed term is a CJK bigram or single character."""
    return _HAS_CJK.match(term) is not None


def _bigrams(run: str) -> tuple[str, ...]:
    return (run,) if len(run) == 1 else tuple(run[i:i + 2] for i in range(len(run) - 1))


@lru_cache(maxsize=200_000)
def split_identifier(chunk: str) -> tuple[str, ...]:
    """The word parts of one identifier, original case: `getPM2_5Level` -> (get, PM, 2, 5, Level)."""
    letters = chunk.replace("_", "")
    if letters.isascii() and letters.isalpha() and letters.islower():
        return tuple(p for p in chunk.split("_") if p)  # snake_case words: no case or digit boundary
    parts: list[str] = []
    for piece in _SEPARATORS.split(chunk):
        if piece:
            parts.extend(p for p in _CASE_BOUNDARY.split(piece) if p)
    return tuple(parts)


@lru_cache(maxsize=200_000)
def _chunk_tokens(chunk: str) -> tuple[str, ...]:
    """Raw tokens of one chunk (accents folded): identifier parts, then the canonical compound when there
    is more than one part; CJK runs inside the chunk as bigrams (no compound then)."""
    if chunk.isascii() and chunk.isalpha() and chunk[1:].islower():
        return (chunk,)  # most chunks: one plain word (`weather`, `Weather`), nothing to fold or split
    chunk = fold(chunk)
    if _HAS_CJK.search(chunk) is None:
        parts = split_identifier(chunk)
        return (*parts, "_".join(parts)) if len(parts) > 1 else parts
    tokens: list[str] = []
    for piece in _split_cjk(chunk):
        if _HAS_CJK.match(piece):
            tokens.extend(_bigrams(piece))
        else:
            for sub in _CHUNK.findall(piece):
                tokens.extend(_chunk_tokens(sub))
    return tuple(tokens)


def raw_tokens(text: str) -> Iterator[str]:
    """Raw tokens of every chunk of `text` (see `_chunk_tokens`)."""
    for match in _CHUNK.finditer(text):
        yield from _chunk_tokens(match.group())


@lru_cache(maxsize=200_000)
def _normalize(token: str) -> str | None:
    """lowercase -> stopword/size filter -> stem; None when the token is dropped."""
    low = token.lower()
    if len(low) < MIN_SIZE:
        return low if is_cjk(low) else None  # one CJK character is a word
    if low in STOP_WORDS:
        return None
    return low if is_cjk(low) else _porter2(low)


class _ChunkTerms(dict):  # type: ignore[type-arg]
    """chunk -> all its index terms, computed on a miss. Catalogs repeat the same words, so this cache
    does most of the work of a build. A dict rather than `lru_cache`: `analyze` looks chunks up with
    `map(cache.__getitem__, ...)`, which stays in C on a hit (a million lookups at 10k tools).
    Emptied when full, which bounds its memory."""

    def __missing__(self, chunk: str) -> tuple[str, ...]:
        if len(self) >= _CACHE_MAX:
            self.clear()
        terms = self[chunk] = tuple(t for t in map(_normalize, _chunk_tokens(chunk)) if t is not None)
        return terms


_CACHE_MAX = 200_000
_CHUNK_TERMS = _ChunkTerms()
_chunk_terms = _CHUNK_TERMS.__getitem__
_findall = _CHUNK.findall
_chain = chain.from_iterable


def analyze(text: str) -> list[str]:
    """Index terms of `text`, in order, duplicates kept (term frequencies matter)."""
    return list(_chain(map(_chunk_terms, _findall(text))))


def is_compound(term: str) -> bool:
    """Whether an analyzed term is a whole identifier rather than one word of it."""
    return "_" in term


# A plain word: letters only, no capital after the first letter. Query chunks like `PVLASfLtIcN`,
# `5FRcFgPufhr` or `user_id` are identifiers or values: searched, but not "meaningful words" whose
# absence from every hit makes the answer "no good match".
_PLAIN_WORD = re.compile(r"^[^\W\d_][^\W\d_A-Z]*$")


# Conversational words of requests ("could you please tell me what...", "I need to..."). They carry no
# intent, so a query drops them when it has other words: they neither score ("tell" must not pull in a
# tool whose example says "tell me the prime factors") nor count as words a hit has to cover. Only the
# query side: the index keeps them, so a tool may still be found by them when nothing else is asked.
FILLER_WORDS = frozenset(
    "i me my mine myself you your please pls kindly could would should can shall might must do does did "
    "doing done what whats what's which who whom whose where when why how tell let lets let's "
    "want wants wanted also just some any there here hi hello hey thanks thank am was "
    "were been being has had having about so all its our ours they them their then than very really "
    "quite".split()
)


def query_terms(text: str) -> tuple[list[str], list[tuple[str, str]]]:
    """(distinct terms to search, distinct meaningful words as (term, lowercase word)) of a query.

    Filler words (FILLER_WORDS) are dropped unless the query has nothing else."""
    terms, words = _query_terms(text)
    kept = [(t, w) for t, w in words if w not in FILLER_WORDS]
    if kept and len(kept) < len(words):
        filler = {t for t, w in words if w in FILLER_WORDS} - {t for t, _ in kept}
        return [t for t in terms if t not in filler], kept
    return terms, words


# Quoted text, and JSON objects or lists, are what a request operates on ("grep 'FIXME' in src",
# "url-encode \"café & crème\"", "merge {\"port\": 80} with ..."), not what it asks for.
# The leading lookahead lets the engine skip every position that opens no literal: 2.1 us instead of 6.5
# per search on the latency benchmark's requests (204 characters on average).
_LITERAL = re.compile(r"""(?=["'`‘“«「{\[])(?:(?<![^\W_])'[^'\n]{1,300}'(?![^\W_])"""
                      r"""|"[^"\n]{1,300}"|`[^`\n]{1,300}`|‘[^’\n]{1,300}’|“[^”\n]{1,300}”"""
                      r"""|«[^»\n]{1,300}»|「[^」\n]{1,300}」|\{[^{}\n]{0,400}\}|\[[^\[\]\n]{0,400}\])""")


def _query_terms(text: str) -> tuple[list[str], list[tuple[str, str]]]:
    """Every chunk's terms are searched; the words of arguments (quoted text, JSON literals, paths and
    command-line flags) are not meaningful words a hit must cover (unless the query has no other words)."""
    terms: dict[str, None] = {}
    words: dict[str, str] = {}
    argument_words: dict[str, str] = {}
    done = 0
    for start, end in _arguments(text):  # no chunk straddles an argument's edge
        _add_chunks(text[done:start], terms, words)
        _add_chunks(text[start:end], terms, argument_words)
        done = end
    _add_chunks(text[done:], terms, words)
    return list(terms), list((words or argument_words).items())


# Paths and command-line flags are arguments too: "mkdir -p build/reports/coverage" asks for mkdir, not
# for tools about builds, reports or coverage. A slash between two short parts is a word's ("km/h",
# "I/O", "and/or", "24/7").
_FLAG = re.compile(r"--?[^\W\d_][\w-]*")
_PATH_OR_FLAG_CANDIDATE = re.compile(r"(?<!\S)(?=-|[^\s/]*/)\S+")  # a token holding a slash or led by "-"


def _arguments(text: str) -> Iterator[tuple[int, int]]:
    """The spans of a query's arguments, in order: its literals (quotes, braces and brackets are no chunk
    characters), and the paths and flags between them (whole space-separated tokens)."""
    first = _LITERAL.search(text)
    if first is None and not _may_hold_path_or_flag(text):  # most requests
        return
    done = 0
    for m in _LITERAL.finditer(text, first.start()) if first is not None else ():
        yield from _paths_and_flags(text, done, m.start())
        yield m.span()
        done = m.end()
    yield from _paths_and_flags(text, done, len(text))


def _may_hold_path_or_flag(text: str) -> bool:
    return "/" in text or " -" in text or text[:1] == "-"


def _paths_and_flags(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    piece = text[start:end]  # sliced: a literal's edge starts a token
    if _may_hold_path_or_flag(piece):
        for m in _PATH_OR_FLAG_CANDIDATE.finditer(piece):
            if _is_path_or_flag(m.group()):
                yield start + m.start(), start + m.end()


def _is_path_or_flag(token: str) -> bool:
    token = token.rstrip(",.;:!?)")
    if token[:1] == "-":
        return _FLAG.fullmatch(token) is not None
    head, slash, tail = token.partition("/")
    return bool(slash) and ("/" in tail or not head or not tail or len(head) > 3 or len(tail) > 3)


def _add_chunks(text: str, terms: dict[str, None], words: dict[str, str]) -> None:
    query_chunk = _query_chunk
    for chunk in _CHUNK.findall(text):
        for term, word in query_chunk(chunk):
            terms[term] = None
            if word is not None:
                words.setdefault(term, word)


@lru_cache(maxsize=200_000)
def _query_chunk(chunk: str) -> tuple[tuple[str, str | None], ...]:
    """(term, lowercase word when the chunk is a meaningful word else None) of each kept token of one
    query chunk: a search analyses the whole query and then each of its clauses, which repeat its
    chunks, so the per-chunk work is done once."""
    tokens = _chunk_tokens(chunk)
    # A plain word, or a CJK bigram: words whose absence from every hit counts against the hits.
    plain = _HAS_CJK.search(chunk) is not None or (
        len(tokens) == 1 and _PLAIN_WORD.match(fold(chunk)) is not None)
    # An identifier's compound ("url-encode", "sha256sum") is a meaningful word too, but only where the
    # catalog knows it (the searcher drops unknown compounds): a command or a tool's own name, unlike
    # a file name or a value passed as an argument.
    return tuple((term, token.lower() if plain or is_compound(term) else None)
                 for token in tokens if (term := _normalize(token)) is not None)


# Sentence ends, line breaks, and the connectives people use to chain requests. Every cut starts at a
# space or a comma: the leading lookahead lets the engine skip other positions at once (the same cuts,
# 2x faster on average, 0.24 -> 0.07 ms on a 1,200-character request).
_CLAUSE_SPLIT = re.compile(
    r"(?=[\s,])(?:(?<=[.!?;])\s+|\s*\n+\s*|,?\s+(?:and then|and also|after that|afterwards|as well as|then|also|and)\s+)",
    re.IGNORECASE,
)
_MIN_CLAUSE_WORDS = 3
_MAX_CLAUSES = 8


def split_clauses(query: str) -> list[str]:
    """The separate requests in a query, or [] when it reads as one request.

    Fragments under three words ("salt and pepper") are not requests of their own, so a query only
    splits when at least two real clauses remain.
    """
    parts = [p.strip(" ,.") for p in _CLAUSE_SPLIT.split(query) if p]
    parts = [p for p in parts if len(p.split()) >= _MIN_CLAUSE_WORDS]
    return parts[:_MAX_CLAUSES] if len(parts) > 1 else []
