"""Search time for hostile queries at the 4,096-character limit, 10k tools (issue 13, item 1).

    python -m benchmarks.latency.hostile_queries [--tools 10000]

Each query is cut to `SearchConfig.max_query_chars` (4,096) by the searcher, as a model's `tool_search`
or a prefetched user message would be. Before the typo-fallback bound (index/fuzzy.py MAX_TERM_LENGTH)
one 1,600-letter word took 41 s and 2 GB; the target is well under 100 ms per search. Prints one line per
query shape: the worst and median of several repeats, after one warm-up search (the first correcting
search of the process, timed apart: it reads the typo table the index store saved, fuzzy.TypoTable).
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time

from toolsearch.index.searcher import Searcher

from ..common.data import sized_catalog, skills_of


def _queries() -> dict[str, str]:
    rng = random.Random(13)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = " ".join("".join(rng.choice(letters) for _ in range(rng.randint(6, 12))) for _ in range(500))
    cjk = "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(4096))
    return {
        "one 4,096-letter word": "a" * 4096,
        "random letters, no spaces": "".join(rng.choice(letters) for _ in range(4096)),
        "CJK text, no spaces": cjk,
        "Japanese kana + kanji": ("東京の天気を教えてください" * 400),
        "500 misspelled words": words,
        "typos of real words, clauses": ("creat invoise for custmer, then sendd emial to the acount "
                                         "managr and also updat the tickett. " * 60),
        # quoted text and JSON are found by a regex before the chunks are read (analysis._LITERAL)
        "quotes, braces, brackets": "'ab' \"cd\" {ef} [gh] `ij` " * 160,
        "unclosed quotes": "\"word 'word " * 400,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    tools = sized_catalog(args.tools)
    with tempfile.TemporaryDirectory() as tmp:
        searcher = Searcher(skills_of(tools), index_dir=tmp)
        started = time.perf_counter()
        searcher.search("creat invoise for custmer")
        print(f"{len(tools)} tools; first correcting search of the process: "
              f"{(time.perf_counter() - started) * 1000:.0f} ms")
        for label, query in _queries().items():
            times = []
            for _ in range(args.repeat):
                started = time.perf_counter()
                searcher.search(query, k=5)
                times.append((time.perf_counter() - started) * 1000)
            print(f"{label:32s} {len(query[:4096]):5d} chars  median {statistics.median(times):7.1f} ms"
                  f"  worst {max(times):7.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
