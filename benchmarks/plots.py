"""PNG plots of the results (matplotlib with the Agg backend, imported only here, only when plotting).

- tokens.png: tool tokens per request against catalog size, one line per strategy (log-log);
- latency.png: search p50 and build time against catalog size, one line per engine (log-log);
- quality.png: Recall@5 and nDCG@10 bars per engine, one group per dataset.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["plot_all"]


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # no display on servers and in CI
    import matplotlib.pyplot as plt

    return plt


def plot_tokens(result: dict[str, Any], path: Path) -> Path:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    sizes = [e["size"] for e in result["sizes"]]
    for strategy in result["sizes"][0]["strategies"]:
        values = [e["strategies"][strategy]["tool_tokens_per_request"] for e in result["sizes"]]
        ax.plot(sizes, values, marker="o", label=strategy)
    ax.set(xscale="log", yscale="log", xlabel="tools in the catalog", ylabel="tool-schema tokens per request",
           title="Tool tokens sent per model request")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_latency(result: dict[str, Any], path: Path) -> Path:
    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2))
    engines = list(dict.fromkeys(r["engine"] for r in result["runs"]))
    for engine in engines:
        runs = [r for r in result["runs"] if r["engine"] == engine and "error" not in r]
        if not runs:
            continue
        left.plot([r["size"] for r in runs], [r["p50_ms"] for r in runs], marker="o", label=engine)
        right.plot([r["size"] for r in runs], [r["build_s"] for r in runs], marker="o", label=engine)
    left.set(xscale="log", yscale="log", xlabel="tools", ylabel="ms", title="Search latency p50")
    right.set(xscale="log", yscale="log", xlabel="tools", ylabel="s", title="Index build time")
    for ax in (left, right):
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_quality(result: dict[str, Any], path: Path) -> Path:
    plt = _pyplot()
    datasets = list(result["datasets"])
    fig, axes = plt.subplots(1, len(datasets), figsize=(5.2 * len(datasets), 4.2), squeeze=False)
    for ax, dataset in zip(axes[0], datasets):
        engines = result["datasets"][dataset]["engines"]
        names = list(engines)
        xs = range(len(names))
        for offset, metric in ((-0.2, "R@5"), (0.2, "nDCG@10")):
            ax.bar([x + offset for x in xs], [engines[n]["overall"][metric] for n in names], width=0.4,
                   label=metric)
        ax.set_xticks(list(xs), names, rotation=20)
        ax.set(ylim=(0, 1), title=dataset)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_all(results: dict[str, dict[str, Any]], folder: Path) -> list[Path]:
    makers = {"tokens": plot_tokens, "latency": plot_latency, "quality": plot_quality}
    return [makers[suite](result, folder / f"{suite}.png") for suite, result in results.items() if suite in makers]
