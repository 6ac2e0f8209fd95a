"""The search index: identifier analysis, the persisted Whoosh BM25F index, and the `Searcher`.

    analysis.py      identifier splitting + stopwords + stemming (`analyze`, `query_terms`)
    chain.py         the same analysis as a whoosh analyzer chain
    documents.py     Tool -> the fields of its search document
    postings.py      raw postings as numpy arrays (the scoring sidecar saved next to Whoosh)
    scoring.py       BM25F from those postings
    fuzzy.py         typo corrections against the index vocabulary
    whoosh_store.py  the Whoosh index of record (imported only when writing)
    store.py         folder layout, manifest, atomic builds, incremental updates, locking
    config.py        `SearchConfig`
    verdict.py       the no-good-match rule: the evidence a ranking gives, the thresholds applied
    needs.py         a request of several needs: clause fusion, places shared across needs
    request.py       one search: its clauses, scorer queries and rankings, each computed once
    reranker.py      the reranker seam (`Reranker`, `RerankerBase`) and the factory SearchConfig(rerank=) uses
    searcher.py      `Searcher`: select:, exact names, BM25F, fuzzy fallback, no-good-match
"""

from .config import SearchConfig
from .searcher import Reranker, Searcher
from .store import BuildReport
from .verdict import Evidence

__all__ = ["BuildReport", "Evidence", "Reranker", "SearchConfig", "Searcher"]
