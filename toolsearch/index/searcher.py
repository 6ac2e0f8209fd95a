"""`Searcher`: ranked tool search over a catalog, following its Registry.

A search runs, in order:
1. `select:a,b` returns exactly those tools (in that order); a query that is exactly a tool name returns
   that tool. The model uses these to load a tool it already knows about.
2. BM25F over the analyzed query (scoring.py), from postings loaded into memory.
3. If the best hit contains too small a share of the query's meaningful words, query words unknown to
   the index are replaced by close vocabulary terms (typo fallback, fuzzy.py) and the search is retried.
4. If the ranking holds no good match under `SearchConfig.no_match` (verdict.py: by default, no tool
   shares a meaningful word with the request), the answer is an empty list: an honest "no good match"
   instead of noise the model would have to read.

Each search analyses its query once (`request.Request`: its clauses, their scorer queries and
rankings). A reranker (`reranker.Reranker`, the seam; the embedding rerank is one) is passed in
built (`toolsearch.rerank.build_reranker`), or built from `SearchConfig(rerank=...)` by the factory
the package names (reranker.py): the index never imports `toolsearch.embed`.

Concurrency: all search state (catalog snapshot, scorer, fuzzy table) lives in one immutable `_State`
that is swapped by a single reference assignment, so searches never lock and never see a half-applied
update; updates are serialized by a lock (and across processes by the store's file lock).
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
import weakref
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import ConfigError, SkillError
from .._text import wire_text
from ..catalog.hits import Hit, ToolRef
from ..catalog.model import Skill, Tool
from ..catalog.registry import Catalog, Registry
from .analysis import split_clauses
from .config import SearchConfig
from .documents import FIELDS
from .fuzzy import FuzzyVocabulary
from .needs import budget
from .postings import Postings
from .request import Request
from .reranker import Reranker, adopt, rerank_factory
from .scoring import Ranked, Scorer
from .store import BuildReport, IndexStore, catalog_docs, skill_fingerprint
from .verdict import Evidence, Verdict

__all__ = ["Reranker", "Searcher"]

_SELECT = re.compile(r"^\s*select\s*:\s*(.*)$", re.IGNORECASE | re.DOTALL)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_ALWAYS_KEPT = 3  # hits an adaptive search keeps whatever their score (one need keeps its 3-5)
# The same for a request of several needs, whose every need's best tool is kept anyway: more places
# kept unconditionally only load look-alikes of the strongest need (whole-task play, tune half, 5,000
# tools: 3 -> 2 kept 80% of tasks complete at 1.25x the oracle's tool tokens per request, not 1.30x).
_ALWAYS_KEPT_SEVERAL = 2


# field bit mask -> the field names it stands for (every mask of the few fields)
_MATCHED = {m: tuple(f for i, f in enumerate(FIELDS) if m >> i & 1) for m in range(1 << len(FIELDS))}


@dataclass(frozen=True, eq=False)
class _State:
    catalog: Catalog
    scorer: Scorer
    fuzzy: FuzzyVocabulary

    @cached_property
    def doc_ids(self) -> dict[str, int]:
        """Tool name -> doc number in the postings (built on the first filtered search)."""
        return {name: i for i, name in enumerate(self.scorer.postings.names)}

    @cached_property
    def allow_masks(self) -> dict[Any, np.ndarray]:
        """allow= predicate (e.g. one profile's permits) -> its doc mask: judging every tool once per
        catalog snapshot, not on every search (a lazily built catalog would build every tool each time)."""
        return {}

    def allowed(self, allow: Callable[[Tool], bool]) -> np.ndarray:
        try:
            mask = self.allow_masks.get(allow)
        except TypeError:  # an unhashable predicate: judged every time
            mask, allow_key = None, None
        else:
            allow_key = allow
        if mask is None:
            names, tools = self.scorer.postings.names, self.catalog.tools
            mask = np.fromiter(((t := tools.get(n)) is not None and bool(allow(t)) for n in names),
                               dtype=bool, count=len(names))
            if allow_key is not None:
                if len(self.allow_masks) >= 64:  # a few profiles in practice; never unbounded
                    self.allow_masks.clear()
                self.allow_masks[allow_key] = mask
        return mask


def _extra(keep: np.ndarray | None) -> int:
    """How many more hits to ask a reranker for, so that filtering its answer still leaves k."""
    return 0 if keep is None else min(int((~keep).sum()), 100)


def _kept(hits: list[Hit], state: _State, keep: np.ndarray | None) -> list[Hit]:
    if keep is None:
        return hits
    ids = state.doc_ids
    return [h for h in hits if (d := ids.get(h.name)) is not None and keep[d]]


class Searcher:
    """Search a catalog's tools. `source`: a `Registry` (followed), a `Catalog`, or `Skill`s."""

    def __init__(
        self,
        source: Registry | Catalog | Iterable[Skill],
        index_dir: str | Path | None = None,
        *,
        config: SearchConfig | None = None,
        progress: bool = False,
        reranker: object = None,
        learned: Any = None,
    ):
        self.config = config or SearchConfig()
        if not isinstance(self.config, SearchConfig):
            raise ConfigError(f"config must be a SearchConfig, got {type(self.config).__name__}")
        if reranker is None and self.config.rerank != "off":
            # The settings' reranker, from the registered factory (toolsearch.rerank: the embed extra
            # is optional, and a missing one raises MissingDependencyError there).
            reranker = rerank_factory().build(self.config.rerank, progress=progress)
        self._reranker = adopt(reranker)
        if isinstance(source, Registry):
            self.registry = source
        elif isinstance(source, Catalog):
            self.registry = Registry(source)  # adopted as it is: a snapshot's stays lazy
        elif isinstance(source, (str, Path)):
            raise ConfigError("Searcher(source) takes skills or a Registry; use Searcher.from_path(path)")
        else:
            try:
                self.registry = Registry(list(source))
            except TypeError:
                raise ConfigError(
                    f"Searcher source must be a Registry, Catalog or iterable of Skill, "
                    f"got {type(source).__name__}"
                ) from None
        self._store = IndexStore(index_dir, progress=progress) if index_dir is not None else None
        # What usage taught (toolsearch.usage): None, a LearnedEvidence, or a profile whose evidence
        # the index folder holds ("default" when the folder has some and nothing was said).
        from ..usage.learned import open_learned

        self._learned = open_learned(learned, index_dir)
        self._lock = threading.RLock()
        self._closed = False
        catalog = self.registry.catalog
        start = time.perf_counter()
        if self._store is not None:
            postings, self.last_build = self._store.open(catalog)
        else:
            postings = Postings.build(catalog_docs(catalog.skills), len(FIELDS))
            self.last_build = BuildReport("memory", postings.n_docs, time.perf_counter() - start)
        self._state = self._make_state(catalog, postings)
        if self._reranker is not None:  # the embedding rerank keeps its vectors next to the index
            self._reranker.open(catalog, index_dir)
        # A weak reference: a registry outliving its searchers must not keep them (and indexes) alive.
        ref = weakref.ref(self)
        self.registry.subscribe(lambda old, new: (s := ref()) is not None and s._on_change(new))
        self.problems: tuple[Any, ...] = ()

    @classmethod
    def from_path(cls, path: str | Path, index_dir: str | Path | None = None, *,
                  strict: bool = False, **kw: Any) -> Searcher:
        """Load a skills folder, skill file or tools.jsonl and search it. Skills with problems are
        left out (see `.problems`); `strict=True` raises `SkillError` instead.

        With an `index_dir`, the parsed catalog is kept there as well (index/snapshot.py): reopening
        an unchanged source then neither parses nor validates it again, and a changed one is loaded
        exactly as the first time."""
        from . import snapshot

        found = snapshot.read(index_dir, path) if index_dir is not None else None
        source = None
        if found is not None:
            catalog, problems = found
        else:
            from ..catalog.loader import load_skills

            if index_dir is not None:
                with contextlib.suppress(OSError):  # taken before loading: see snapshot.py
                    source = snapshot.source_state(path)
            result = load_skills(path)
            catalog, problems = result.skills, result.problems
        if strict and any(p.is_error for p in problems):  # repaired schema slips are warnings
            raise SkillError([p for p in problems if p.is_error])
        searcher = cls(catalog, index_dir, **kw)
        searcher.problems = tuple(problems)
        digest = searcher._store.digest if searcher._store is not None else None
        if source is not None and digest is not None:
            with contextlib.suppress(OSError):  # a read-only index folder: no snapshot, still correct
                snapshot.write(index_dir, source, searcher.catalog, searcher.problems, search_digest=digest)
        return searcher

    @property
    def reranker(self) -> Reranker | None:
        """The reranker in use (an `EmbeddingReranker` for SearchConfig(rerank=...)), or None. An
        object passed as `reranker=` with only a `rerank` method is wrapped (`reranker.adopt`)."""
        return self._reranker

    def reranker_for(self, query: str) -> Reranker | None:
        """The reranker that searches `query`: None without one, and None when its embedder does not
        read the query (`EmbeddingReranker.reads`: an English-only model and a request mostly in
        another script, whose cosines are noise; the default model puts "tell me a joke" in Chinese
        at 0.45 to a Chinese weather tool, above the bar from which the embedding alone answers).
        Such a query is searched by BM25F alone, which matches Chinese by character bigrams and
        abstains when none is shared."""
        reranker = self._reranker
        return reranker if reranker is not None and reranker.reads(query) else None

    @property
    def index_dir(self) -> Path | None:
        """The index folder (None: an in-memory index); learned evidence lives in it (toolsearch.usage)."""
        return self._store.path if self._store is not None else None

    @property
    def catalog(self) -> Catalog:
        """The catalog snapshot the index currently reflects (hits always come from it)."""
        return self._state.catalog

    def use_learned(self, learned: Any) -> None:
        """Rank from now on with `learned` (a LearnedEvidence, a profile name of the index folder's
        evidence, or None for none): what `toolsearch learn` wrote, picked up without reopening."""
        from ..usage.learned import open_learned

        with self._lock:
            self._learned = None if learned is None else open_learned(
                learned, self._store.path if self._store else None)
            state = self._state
            self._state = self._make_state(state.catalog, state.scorer.postings)

    def _make_state(self, catalog: Catalog, postings: Postings) -> _State:
        scorer = Scorer(postings, boosts=self.config.field_boosts(), b=self.config.field_bs(),
                        k1=self.config.k1)
        if self._learned is not None:
            from ..usage.ranking import with_learned

            scorer = with_learned(scorer, self._learned)  # type: ignore[assignment]
        return _State(catalog, scorer, FuzzyVocabulary(postings.vocab, postings.typo))

    # --- following the registry --------------------------------------------------------------------

    def _on_change(self, new: Catalog) -> None:
        with self._lock:
            if self._closed:
                return
            state = self._state
            start = time.perf_counter()
            old = {s.name: s for s in state.catalog.skills}
            changed = [s for s in new.skills if old.get(s.name) is not s and (
                s.name not in old or skill_fingerprint(old[s.name]) != skill_fingerprint(s))]
            removed = set(old) - {s.name for s in new.skills}
            if self._reranker is not None:
                self._reranker.sync(new)  # embeds only new or changed tools
            if not changed and not removed:
                self._state = replace(state, catalog=new)  # e.g. only a handler changed
                return
            if self._store is not None:
                postings = self._store.update(new, changed, removed)
            else:
                names = removed | {s.name for s in changed}
                postings = state.scorer.postings.replace_skills(names, catalog_docs(changed))
            self._state = self._make_state(new, postings)
            self.last_build = BuildReport(
                "updated", postings.n_docs, time.perf_counter() - start,
                str(self._store.path) if self._store else None,
                updated=tuple(s.name for s in changed), removed=tuple(sorted(removed)),
            )

    def close(self) -> None:
        """Stop following the registry. Searching a closed searcher still works on its last snapshot."""
        with self._lock:
            self._closed = True

    def __enter__(self) -> Searcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- searching ---------------------------------------------------------------------------------

    def search(self, query: str, k: int = 5, *, exclude: Collection[str] = (),
               allow: Callable[[Tool], bool] | None = None, adaptive: bool | None = None) -> list[Hit]:
        """Up to `k` tools, best first; an empty list means no good match.

        A request of several needs ("read the CSV, then email the chart to Ann") gets hits for each
        need: each need's best tool is placed first, then the rest by the fused ranking. With
        `adaptive` (default: `config.adaptive_hits`) such a request may get more than `k` hits:
        `hit_budget(query, k)` says how many. A one-need request never gets more than `k`.

        `exclude`: tool names never returned (e.g. those a conversation already has loaded, so a
        repeated search yields the next-best ones). `allow`: a predicate over tools (a profile's
        `permits`); tools it refuses are filtered out before ranking, so they never show up, not even
        as the reason for a "no good match".
        """
        state = self._state
        text, k = self._clean(query, k, state)
        keep = self._keep(state, exclude, allow)
        direct = self._direct(state, text)
        if direct is not None:
            direct = _kept(direct, state, keep)
            return direct if text.lower().lstrip().startswith("select") else direct[:k]
        # A repeated search also ranks without its exclusions (`_answered_before_exclusion`,
        # `Request.next_best`): over what `allow` permits.
        allowed = self._keep(state, (), allow) if exclude else keep
        return self._answer(state, self._request(state, text, keep, allowed), k, adaptive, bool(exclude))

    def _answer(self, state: _State, request: Request, k: int, adaptive: bool | None, excluding: bool
                ) -> list[Hit]:
        """`search` of a query that names no tool (`request`), its dense gate left in `request.gate`."""
        config, text, needs, keep = self.config, request.text, request.needs, request.keep
        adaptive = config.adaptive_hits if adaptive is None else adaptive
        reranker = self.reranker_for(text)
        most = self._budget(len(needs), k) if adaptive else k
        depth = max(most, reranker.depth) if reranker is not None else most
        ranked, verdict, tops = request.rank(depth, k, filtered=True)
        n = self._budget(max(len(tops), 1), k) if adaptive else k
        # The reranker's no-good-match evidence (the embedding rerank's dense gate), over the whole
        # catalog: a tool filtered out by exclude=/allow= still shows the request is in its domain.
        gate = request.gate = reranker.dense_gate(text) if reranker is not None else None
        if gate is not None and gate.off_domain() and config.no_match == "strict":
            return []  # the request is an everyday one, not one for this catalog
        confident = gate is not None and gate.confident(config.no_match)
        if not (ranked and (confident or verdict.answers(config, state.scorer.n_docs) or
                            self._answered_before_exclusion(request, k, excluding))):
            # hybrid: dense-only hits when the embedding alone answers, or whenever its gate is off
            if (confident or gate is None) and reranker is not None and reranker.wants_all_queries:
                return _kept(reranker.rerank(text, [], n + _extra(keep)), state, keep)[:n]
            return []
        if adaptive and excluding and needs and keep is not None and reranker is None:
            repeat = request.next_best(n)
            if repeat:
                return self._hits(state, repeat)
        if adaptive and config.min_relative_score > 0 and reranker is None:
            # Hits well below the best cost the model tokens and are one repeated search away; the
            # first _ALWAYS_KEPT hits and each need's best tool stay whatever their score. (Not with a
            # reranker: it reorders, so BM25F scores say little about its order.)
            floor = config.min_relative_score * ranked[0].score
            always = _ALWAYS_KEPT_SEVERAL if tops else _ALWAYS_KEPT
            ranked = ranked[:always] + [r for r in ranked[always:n] if r.score >= floor or r.doc in tops]
        hits = self._hits(state, ranked)
        if reranker is not None:
            hits = _kept(reranker.rerank(text, hits, n + _extra(keep)), state, keep)
        return hits[:n]

    def query(self, text: str, k: int = 5) -> list[Hit]:
        """Field and phrase queries (`name:weather`, `description:"current time"`, `name:git_*`),
        answered by the Whoosh index itself: see `whoosh_query` for the syntax."""
        from .whoosh_query import search

        folder = self._store.whoosh_folder() if self._store is not None else None
        return search(text, k, self._state.catalog, folder)

    def evidence(self, query: str, k: int = 5) -> Evidence:
        """What the no-good-match rule sees for `query` (for tuning its knobs on a catalog and for
        telling a user why a request got no answer). A query answered by exact name or `select:`
        is answered with no ranking evidence."""
        state = self._state
        text, k = self._clean(query, k, state)
        if self._direct(state, text) is not None:
            return Evidence(bool(self.search(query, k)), 0.0, 1.0, 1.0, 0, 0, None)
        request = self._request(state, text)
        answered = bool(self._answer(state, request, k, None, False))
        ranked, verdict, _ = request.rank(k, k, filtered=False)
        n_docs, gate = state.scorer.n_docs, request.gate
        return Evidence(answered, verdict.strength(n_docs) if ranked else 0.0, verdict.coverage,
                        verdict.top_coverage, len(verdict.weights),
                        verdict.distinct_matched(self.config.min_matched_idf, n_docs),
                        gate.closest if gate else None, (gate.low, gate.high) if gate else None,
                        gate.everyday if gate else None)

    def _answered_before_exclusion(self, request: Request, k: int, excluding: bool) -> bool:
        """Whether the request has a good match once the excluded tools count again. A repeated search
        excludes the tools a conversation has loaded; those are the evidence that the request is in the
        catalog's domain, so the next-best tools are what was asked for, even when none of them would
        be a good match on its own ("turn it by 20 degrees and flip it": once the flip tool is loaded,
        the rotate tool shares only "turn" with the request)."""
        if not excluding:
            return False
        ranked, verdict, _ = request.rank(k, k, filtered=False)
        return bool(ranked) and verdict.answers(self.config, request.scorer.n_docs)

    def _rank(self, state: _State, text: str, n: int, judged: int, keep: np.ndarray | None,
              needs: list[str]) -> tuple[list[Ranked], Verdict, frozenset[int]]:
        """`Request.rank` of `text` over `keep` in one call (what benchmarks/no_match reads)."""
        return self._request(state, text, keep, keep, needs).rank(n, judged, filtered=False)

    def _request(self, state: _State, text: str, keep: np.ndarray | None = None,
                 allowed: np.ndarray | None = None, needs: list[str] | None = None) -> Request:
        """One search of `text` (see request.py): its clauses split here, once."""
        return Request(state.scorer, state.fuzzy, self.config, text, self._needs(text) if needs is None else needs,
                       allowed=allowed, keep=keep)

    def hit_budget(self, query: str, k: int = 5) -> int:
        """How many hits an adaptive `search(query, k)` may return: `k` for a request of one need; for
        several needs `hits_per_need` per need when that is more than `k`, at most `max_hits`. A need
        is a clause of the request whose best tool is a strong match (`need_strength`: a clause of
        mere context is not one), and clauses sharing their best tool count once.

        Callers that pay per loaded tool (the interceptor's token budget) can read this before
        searching; the loadout's own count and token limits still apply to whatever is loaded."""
        state = self._state
        text, k = self._clean(query, k, state)
        needs = self._needs(text)
        if not needs or self._direct(state, text) is not None:
            return k
        tops = self._request(state, text, needs=needs).rank(self._budget(len(needs), k), k, filtered=False)[2]
        return self._budget(max(len(tops), 1), k)

    def _budget(self, needs: int, k: int) -> int:
        return budget(needs, k, self.config.hits_per_need, self.config.max_hits)

    def _needs(self, text: str) -> list[str]:
        """The separate requests of a query ([] for one request)."""
        return split_clauses(text) if self.config.clause_weight > 0 else []

    def candidates(self, query: str, n: int = 50) -> list[Hit]:
        """The top `n` BM25F hits without the no-good-match cut (the input of a reranker)."""
        state = self._state
        text, n = self._clean(query, n, state)
        return self._hits(state, self._request(state, text).rank(n, n, filtered=False)[0])

    @staticmethod
    def _keep(state: _State, exclude: Collection[str], allow: Callable[[Tool], bool] | None
              ) -> np.ndarray | None:
        """A bool per indexed doc: may it be returned? None when nothing is filtered."""
        if not exclude and allow is None:
            return None
        if isinstance(exclude, str):
            raise ConfigError("exclude= takes a collection of tool names, not one string")
        if allow is not None and not callable(allow):
            raise ConfigError(f"allow= must be a callable Tool -> bool (e.g. profile.permits), got "
                              f"{type(allow).__name__}")
        keep = (np.ones(len(state.scorer.postings.names), dtype=bool) if allow is None
                else state.allowed(allow).copy())
        if exclude:
            index = state.doc_ids
            for name in exclude:
                doc = index.get(name)
                if doc is not None:
                    keep[doc] = False
        return keep

    def _clean(self, query: str, k: int, state: _State) -> tuple[str, int]:
        """The query as searched and `k` cut to the catalog's size (there are no more hits than tools;
        `k=2**63` overflowed the ranking's C integers)."""
        if not isinstance(query, str):
            raise ConfigError(f"query must be a string, got {type(query).__name__}")
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise ConfigError(f"k must be a positive integer, got {k!r}")
        k = min(k, max(state.scorer.n_docs, 1))
        # Lone surrogates (a JSON "\udc80" escape) become U+FFFD: encoding one to UTF-8 raised in the
        # index's term lookup and again wherever the query went next.
        return wire_text(_CONTROL.sub(" ", query[: self.config.max_query_chars])), k

    def _direct(self, state: _State, text: str) -> list[Hit] | None:
        select = _SELECT.match(text)
        if select:
            names = [n for n in re.split(r"[\s,]+", select.group(1)) if n]
        elif text.strip() in state.catalog.tools:
            names = [text.strip()]
        else:
            return None
        tools = [state.catalog.tools[n] for n in dict.fromkeys(names) if n in state.catalog.tools]
        return [Hit(t.name, 1.0, t.skill, ("name",), t) for t in tools]

    @staticmethod
    def _hits(state: _State, ranked: list[Ranked]) -> list[Hit]:
        """Hits of `ranked`, each tool looked up only when read (`ToolRef`: callers of a search mostly
        read names and scores), in this state's catalog: the one the ranking came from."""
        postings, tools = state.scorer.postings, state.catalog.tools
        names, skill_names, skill_of = postings.names, postings.skill_names, postings.skill_of
        hits = []
        for r in ranked:
            matched = _MATCHED.get(r.fields)
            if matched is None:
                # the bit after FIELDS: requests learned from usage matched (toolsearch.usage.ranking)
                matched = tuple(f for i, f in enumerate((*FIELDS, "learned")) if r.fields >> i & 1)
            name = names[r.doc]
            hits.append(Hit(name, round(r.score, 6), skill_names[int(skill_of[r.doc])], matched,
                            ToolRef(tools, name)))  # type: ignore[arg-type]
        return hits

