"""What the event stream costs per `chat.completions.create`, with and without subscribers.

    python -m benchmarks.events_overhead [--size 1000] [--turns 40] [--repeats 9]

The measured loop is `common.interceptor.play`: one session plays `turns` user turns (a search round, a
call round, an answer) over a `size`-tool catalog, search precomputed and HTTP replaced by pre-built
responses, so the clock covers only what toolsearch does per create (process CPU time). Three variants
run interleaved, pass by pass, so drift on a shared machine hits them alike:

- `removed`: the turn's event publishing patched out (`driver.publish_turn` a no-op): the code as if
  the stream did not exist (the search timing the recorder keeps stays: two `perf_counter` calls);
- `no_subscriber`: the default, `wrap()` without `on_event` (one attribute check per create);
- `subscriber`: `on_event` a no-op callable: the events are built and queued, delivered on the
  stream's thread.

The claim checked: `no_subscriber` minus `removed` is within the noise, i.e. smaller than the spread
between passes of one variant. Results: benchmarks/results/events_overhead.{md,json}.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

RESULTS = Path(__file__).resolve().parents[1] / "results"


def measure(*, size: int = 1000, turns: int = 40, repeats: int = 9) -> dict[str, Any]:
    from toolsearch import InterceptorOptions, Session
    from toolsearch.interceptor import driver

    from ..common.interceptor import fixed_turns, play

    fixed = fixed_turns(size, turns)
    variants = {
        "removed": InterceptorOptions(),
        "no_subscriber": InterceptorOptions(),
        "subscriber": InterceptorOptions(on_event=lambda event: None),
    }
    real_publish = driver.publish_turn
    means: dict[str, list[float]] = {name: [] for name in variants}
    for number in range(repeats + 1):  # the first pass warms every variant up and is not kept
        for name, options in variants.items():
            driver.publish_turn = (lambda session, recorder: None) if name == "removed" else real_publish
            try:
                wrapper = SimpleNamespace(options=options, reminder=lambda: None)
                _wall, cpu = play(Session(options, id=f"{name}-{number}"), fixed, wrapper)
            finally:
                driver.publish_turn = real_publish
            if number:
                means[name].append(statistics.fmean(cpu))
        variants["subscriber"].events.flush(30)
    out: dict[str, Any] = {"catalog_tools": size, "turns": len(fixed.texts), "repeats": repeats,
                           "load_average": os.getloadavg()[0], "python": sys.version.split()[0]}
    for name, values in means.items():
        out[name] = {"median_us": statistics.median(values), "min_us": min(values),
                     "spread_us": max(values) - min(values)}
    difference = out["no_subscriber"]["median_us"] - out["removed"]["median_us"]
    noise = statistics.median([out[name]["spread_us"] for name in ("removed", "no_subscriber")])
    out["no_subscriber_minus_removed_us"] = difference
    out["noise_us"] = noise
    out["within_noise"] = abs(difference) <= noise
    out["subscriber_minus_removed_us"] = out["subscriber"]["median_us"] - out["removed"]["median_us"]
    return out


def write(result: dict[str, Any], folder: Path = RESULTS) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "events_overhead.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    rows = "\n".join(f"| {name} | {result[name]['median_us']:.1f} | {result[name]['min_us']:.1f} | "
                     f"{result[name]['spread_us']:.1f} |" for name in ("removed", "no_subscriber", "subscriber"))
    verdict = "within the noise" if result["within_noise"] else "ABOVE the noise"
    (folder / "events_overhead.md").write_text(f"""# Event stream overhead per create()

{result['catalog_tools']} catalog tools, {result['turns']} user turns per pass (search round, call round,
answer: 3 model calls per create), {result['repeats']} interleaved passes per variant, process CPU time per
create (search and HTTP excluded; see `benchmarks/events_overhead/suite.py`). Load average at the start:
{result['load_average']:.2f}; Python {result['python']}.

| variant | median of pass means (µs) | best pass (µs) | spread between passes (µs) |
|---|---|---|---|
{rows}

- no subscriber vs the publishing code removed: {result['no_subscriber_minus_removed_us']:+.1f} µs per create,
  {verdict} (spread between passes of one variant: {result['noise_us']:.1f} µs).
- with a no-op subscriber (events built and queued; delivered on the stream's thread):
  {result['subscriber_minus_removed_us']:+.1f} µs per create.
""", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.events_overhead", description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    result = measure(size=args.size, turns=args.turns, repeats=args.repeats)
    write(result, args.out)
    print((args.out / "events_overhead.md").read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
