"""`toolsearch search [--catalog PATH] [--index DIR] [-k N] [--json] [--no-match P] [--explain] QUERY`.

Searches the catalog (its index built in memory, or kept in `--index DIR`: see `_index` for the rule
every verb follows) and prints one line per hit:
rank, name, score, skill, matched fields and the first line of the description; `--json` prints one JSON
object per hit instead. No hit: one sentence on stderr says why, in plain words; `--explain` gives the
evidence next to the SearchConfig knobs it was held to. A query in field or phrase syntax
(`name:git_*`, `description:"current time"`: `index/whoosh_query.py`) is answered by the Whoosh index
itself, as Whoosh ranks it. Also home of the catalog/index options the `index` and `rank` verbs share.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .._echo import echo
from .._errors import ConfigError
from ..catalog.bundled import default_catalog_path
from ._catalog import require_tools
from ._index import INDEX_HELP, check_index_folder, record_catalog
from ._progress import show_embedding_progress

__all__ = ["RERANK_MODES", "add_catalog_options", "add_learned_option", "add_parser", "add_rerank_option",
           "normalize_rerank", "open_searcher", "run", "why_no_match"]


def add_catalog_options(parser: argparse.ArgumentParser, *, required: bool = False) -> None:
    parser.add_argument("--catalog", default=None, required=required,
                        metavar="PATH", help="skills folder, skill file or tools.jsonl"
                        + ("" if required else " (default: ./skills, else the bundled skills)"))
    parser.add_argument("--index", default=None, required=required, metavar="DIR", help=INDEX_HELP)


RERANK_MODES = ("rerank", "hybrid")


def normalize_rerank(argv: list[str]) -> list[str]:
    """`--rerank` given bare means hybrid: spell that out when the next word is not a mode, so argparse
    (whose optional value would take any word) never swallows the query as the mode."""
    out = []
    for i, word in enumerate(argv):
        out.append(word)
        if word == "--":
            return out + argv[i + 1:]
        if word == "--rerank" and (i + 1 == len(argv) or argv[i + 1] not in RERANK_MODES):
            out.append("hybrid")
    return out


def add_rerank_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rerank", nargs="?", const="hybrid", default=None, choices=RERANK_MODES,
                        help="embedding rerank (needs the embed extra): 'rerank' reorders BM25F hits, "
                        "'hybrid' (the default when given bare) also adds tools found by meaning only")


def add_learned_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--learned", default=None, metavar="PROFILE",
                        help="rank with what `toolsearch learn --profile PROFILE` taught the --index folder "
                        "(default: its 'default' profile's evidence, if any)")


def _learned_profile(args: argparse.Namespace) -> str | None:
    """--learned PROFILE, checked: it needs --index, and the folder must hold that profile's evidence
    (a misspelt profile would otherwise rank silently without any)."""
    profile = getattr(args, "learned", None)
    if profile is None:
        return None
    if args.index is None:
        raise ConfigError(f"--learned {echo(profile)} reads the evidence `toolsearch learn` wrote into an index "
                          "folder: give --index DIR too")
    from ..usage.learned import learned_path

    if not learned_path(args.index, profile).is_file():
        raise ConfigError(f"--learned {echo(profile)}: {args.index} holds no learned evidence of that profile "
                          f"(fold usage into it with: toolsearch learn --catalog {args.catalog} --index {args.index} "
                          f"--profile {profile} --usage FILE)")
    return profile


def open_searcher(args: argparse.Namespace, *, progress: bool = False) -> Any:
    from ..index.config import SearchConfig
    from ..index.searcher import Searcher

    args.catalog = args.catalog or default_catalog_path()
    if args.index is not None:
        check_index_folder(args.index, args.catalog)
    learned = _learned_profile(args)
    rerank = getattr(args, "rerank", None) or "off"
    if rerank != "off":
        show_embedding_progress(args.command)
    reranker = None
    if rerank != "off":
        from ..rerank import build_reranker

        # Embedding a large catalog the first time takes a minute: always show that progress.
        reranker = build_reranker(rerank, progress=True)
    searcher = Searcher.from_path(args.catalog, args.index, progress=progress or rerank != "off",
                                  config=SearchConfig(no_match=getattr(args, "no_match", None) or "balanced"),
                                  reranker=reranker, learned=learned)
    require_tools(args.catalog, len(searcher.catalog), searcher.problems)
    if args.index is not None:
        record_catalog(args.index, args.catalog)
    errors = [p for p in searcher.problems if getattr(p, "is_error", True)]  # repaired schemas are warnings
    if errors:
        print(f"toolsearch {args.command}: warning: {len(errors)} problem(s) in "
              f"{args.catalog}; those skills are left out (details: toolsearch validate "
              f"{args.catalog})", file=sys.stderr)
    return searcher


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {echo(text)}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {echo(text)}")
    return value


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser("search", help="search the tools of a catalog",
                                   description=__doc__.split("\n\n")[0])
    add_catalog_options(parser)
    parser.add_argument("-k", type=positive_int, default=5, help="number of hits (default: 5)")
    parser.add_argument("--json", action="store_true",
                        help='one JSON object per hit; no good match: one object {"hits": [], '
                             '"no_good_match": REASON}')
    add_rerank_option(parser)
    add_learned_option(parser)
    parser.add_argument("--no-match", choices=("balanced", "strict", "off"), default="balanced",
                        help="when to answer 'no good match': balanced (default: only when no tool shares a "
                             "meaningful word with the request), strict (the calibrated rule), off (never)")
    parser.add_argument("--explain", action="store_true",
                        help="on no good match, show the evidence next to the SearchConfig knobs it is held to")
    parser.add_argument("query", nargs="+", metavar="QUERY",
                        help='what the tool should do; or a field/phrase query such as name:git_* or '
                             'description:"current time" (fields: name, description, params, param_docs, '
                             'tags, examples, skill, tool)')
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    query = " ".join(args.query)
    if not query.strip():
        raise ConfigError("the query is empty; say what the tool should do, e.g. 'weather forecast'")
    from ..index.whoosh_query import is_field_query

    searcher = open_searcher(args)
    fielded = is_field_query(query)
    hits = searcher.query(query, args.k) if fielded else searcher.search(query, args.k)
    for rank, hit in enumerate(hits, 1):
        if args.json:
            print(json.dumps({"rank": rank, "name": hit.name, "score": hit.score, "skill": hit.skill,
                              "matched": list(hit.matched), "description": hit.description}))
        else:
            line = (hit.description.strip().splitlines() or [""])[0]
            line = line if len(line) <= 100 else line[:99] + "…"
            print(f"{rank:>2}. {hit.name}  {hit.score:.3f}  [{hit.skill}] "
                  f"({', '.join(hit.matched)})  {line}")
    if not hits:
        if fielded:
            reason = "no tool matches the field query (its words are analyzed as the index's are)"
        else:
            reason = why_no_match(searcher, query, args.k) if args.explain else plain_no_match(searcher, query, args.k)
        if args.json:  # a script reading stdout must tell "no match" from "printed nothing at all"
            print(json.dumps({"hits": [], "no_good_match": reason}))
        else:
            print(f"no good match: {reason}", file=sys.stderr)
    return 0


def plain_no_match(searcher: Any, query: str, k: int) -> str:
    """Why a request got no tool, in one sentence a user reads (no knob names: those are `--explain`'s)."""
    from ..index.verdict import nearer_everyday

    e, config, dense_knobs = searcher.evidence(query, k), searcher.config, _rerank_settings(searcher)
    dense = e.dense_bars is not None and e.closest is not None
    if config.no_match == "strict" and dense and nearer_everyday(e.everyday, e.closest, dense_knobs.everyday_lead):
        return "the request reads like an everyday request rather than one for these tools"
    if config.no_match == "strict" and dense and e.closest < e.dense_bars[0]:  # type: ignore[index]
        return "no tool is close in meaning to the request"
    if e.words == 0:
        why = "the request has no word a tool could be found by (only common words, numbers or values)"
    elif e.coverage == 0:
        why = "no tool shares a meaningful word with the request"
    else:
        why = "the tools share too little of the request to be a good match (--no-match balanced shows the nearest)"
    return why + (", and none is close to it in meaning" if dense and config.no_match == "balanced" else "")


def why_no_match(searcher: Any, query: str, k: int) -> str:
    """The evidence the no-good-match rule saw, next to the bars it is held to (`SearchConfig`): what
    `--explain` prints."""
    from ..index.verdict import nearer_everyday

    e, config = searcher.evidence(query, k), searcher.config
    dense_knobs = _rerank_settings(searcher)
    # an English-only model and a request in another script: BM25F alone judged it
    script = "the embedding model does not read the request's script, so words alone decide: " if (
        searcher.reranker is not None and searcher.reranker_for(query) is None) else ""
    if config.no_match == "balanced":
        return script + (f"no_match balanced: the best tools hold {e.coverage:.0%} of the request's {e.words} "
                f"meaningful words (idf-weighted; balanced answers from any shared word)"
                + (f"; best cosine {e.closest:.2f}, short of {e.dense_bars[1]:.2f}, from which the embedding "
                   f"alone answers (dense_answer_quantile {dense_knobs.dense_answer_quantile})"
                   if e.dense_bars is not None and e.closest is not None else ""))
    if e.dense_bars is not None and e.closest < e.dense_bars[0]:  # bars come with a cosine
        return (f"no tool embeds near the request: best cosine {e.closest:.2f}, below {e.dense_bars[0]:.2f}, "
                f"what {dense_knobs.dense_gate_quantile:.0%} of everyday requests reach in this catalog "
                f"(dense_gate_quantile; floor min_dense_similarity {dense_knobs.min_dense_similarity})")
    if nearer_everyday(e.everyday, e.closest, dense_knobs.everyday_lead):
        return (f"the request lies nearer everyday requests than any tool: cosine {e.everyday:.2f} to the "
                f"nearest ones this catalog does not serve as well, {e.closest:.2f} to its best tool "
                f"(everyday_lead {dense_knobs.everyday_lead})")
    text = script
    if e.strength == 0:
        return text + "no tool shares a meaningful word with the request"
    text += (f"the best tools hold {e.coverage:.0%} of the request's {e.words} meaningful words (bar: "
             f"min_coverage {config.min_coverage:.0%}) and share {e.shared} distinctive word(s) with it, "
             f"strength {e.strength:.2f} (bars: min_single_strength {config.min_single_strength} with one "
             f"shared word, min_strength {config.min_strength} with two)")
    if e.dense_bars is not None:
        text += (f"; best cosine {e.closest:.2f}, short of {e.dense_bars[1]:.2f}, from which the embedding "
                 f"alone answers in this catalog (dense_answer_quantile {dense_knobs.dense_answer_quantile})")
    return text


def _rerank_settings(searcher: Any) -> Any:
    """The dense knobs the searcher's reranker judged with (`RerankConfig`; the defaults for no
    reranker or another kind, whose dense evidence, if any, is its own)."""
    from ..embed.config import RerankConfig
    from ..embed.hybrid import EmbeddingReranker

    reranker = searcher.reranker
    return reranker.config if isinstance(reranker, EmbeddingReranker) else RerankConfig(mode="off")
