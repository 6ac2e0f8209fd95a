"""The analysis of `toolsearch.index.analysis` as a real whoosh analyzer chain.

`identifier_analyzer()` is `IdentifierTokenizer | LowercaseFilter | StopFilter | StemFilter(porter2)`,
whoosh's `StemmingAnalyzer` with our identifier tokenizer in front. Use it in a whoosh schema to analyze
raw text inside whoosh; `analysis.analyze` computes exactly the same terms faster (tested).
"""

from __future__ import annotations

from typing import Any, Iterator

from whoosh.analysis import LowercaseFilter, StemFilter, StopFilter, Token, Tokenizer
from whoosh.lang.porter2 import stem as _porter2

from .analysis import MIN_SIZE, STOP_WORDS, raw_tokens

__all__ = ["IdentifierTokenizer", "identifier_analyzer"]


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
            yield token


def identifier_analyzer() -> Any:
    """The whoosh analyzer chain equivalent to `analysis.analyze`."""
    return (
        IdentifierTokenizer()
        | LowercaseFilter()
        | StopFilter(stoplist=STOP_WORDS, minsize=MIN_SIZE)
        | StemFilter(stemfn=_porter2, cachesize=-1)
    )
