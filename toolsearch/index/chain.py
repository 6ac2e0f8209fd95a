"""The analysis of `toolsearch.index.analysis` as a real whoosh analyzer chain.

`identifier_analyzer()` is `IdentifierTokenizer | LowercaseFilter | StopFilter | MinSizeFilter |
StemFilter(porter2)`, whoosh's `StemmingAnalyzer` with our identifier tokenizer (accent folding, CJK
bigrams, identifier splitting) in front; the size filter keeps one-character CJK words. Use it in a whoosh schema to analyze
raw text inside whoosh; `analysis.analyze` computes exactly the same terms faster (tested).
"""

from __future__ import annotations

from typing import Any, Iterator

from whoosh.analysis import Filter, LowercaseFilter, StemFilter, StopFilter, Token, Tokenizer
from whoosh.lang.porter2 import stem as _porter2

from .analysis import MIN_SIZE, STOP_WORDS, is_cjk, raw_tokens

__all__ = ["IdentifierTokenizer", "MinSizeFilter", "identifier_analyzer"]


class IdentifierTokenizer(Tokenizer):  # type: ignore[misc]
    """Emits identifier parts plus the canonical compound of each identifier-like chunk."""

    def __call__(  # whoosh's tokenizer signature
        self, value: str, positions: bool = False, chars: bool = False, keeporiginal: bool = False,
        removestops: bool = True, start_pos: int = 0, start_char: int = 0, mode: str = "",
        **kwargs: Any,
    ) -> Iterator[Token]:
        token = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        for pos, text in enumerate(raw_tokens(value)):
            token.text = text
            token.boost = 1.0
            token.stopped = False
            if keeporiginal:
                token.original = text
            if positions:
                token.pos = start_pos + pos
            if chars:  # raw_tokens keeps no offsets: every token spans the value (the query parser's
                # phrases ask for them, for highlighting only)
                token.startchar, token.endchar = start_char, start_char + len(value)
            yield token


class MinSizeFilter(Filter):  # type: ignore[misc]
    """Drops tokens shorter than MIN_SIZE, except a CJK character (a whole word in those scripts)."""

    def __call__(self, tokens: Iterator[Token]) -> Iterator[Token]:
        for token in tokens:
            if len(token.text) >= MIN_SIZE or is_cjk(token.text):
                yield token


def _stem(word: str) -> str:
    return word if is_cjk(word) else _porter2(word)


def identifier_analyzer() -> Any:
    """The whoosh analyzer chain equivalent to `analysis.analyze`."""
    return (
        IdentifierTokenizer()
        | LowercaseFilter()
        | StopFilter(stoplist=STOP_WORDS, minsize=1)
        | MinSizeFilter()
        | StemFilter(stemfn=_stem, cachesize=-1)
    )
