"""PNG plots of a `make ycsb` run (matplotlib, no display needed):
throughput per workload, and latency percentiles, per language and backend."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

from .summary import LANG_ORDER, PEER_NAMES, ROWS  # noqa: E402

COLORS = {"uniheap": "#d62728", "lmdb": "#1f77b4", "memory": "#7f7f7f", "redis": "#2ca02c",
          "chronicle": "#9467bd"}
NAMES = dict(PEER_NAMES, uniheap="uniheap")


def _languages(runs):
    return [lang for lang in LANG_ORDER if any(r.language == lang for r in runs)]


def _axis(ax, title, width, bars, labels, ylabel):
    """Ticks under the middle of each group of bars, log scale, legend."""
    ax.set_xticks([j + width * (bars - 1) / 2 for j in range(len(labels))])
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)


def _save(fig, title, path):
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def throughput(runs, durability, path, title):
    """One panel per language: grouped bars of ops/s per workload by backend."""
    rows = [r for r in runs if r.block == "matrix" and r.durability == durability and r.ok]
    langs = _languages(rows)
    if not langs:
        return False
    fig, axes = plt.subplots(1, len(langs), figsize=(6 * len(langs), 4.5), squeeze=False)
    for ax, lang in zip(axes[0], langs):
        mine = [r for r in rows if r.language == lang]
        backends = [b for b in COLORS if any(r.backend == b for r in mine)]
        width = 0.8 / max(1, len(backends))
        for i, b in enumerate(backends):
            vals = {r.workload: r.throughput for r in mine if r.backend == b}
            xs = [j + i * width for j, w in enumerate(ROWS) if w in vals]
            ys = [vals[w] for w in ROWS if w in vals]
            ax.bar(xs, ys, width, label=NAMES[b], color=COLORS[b])
        _axis(ax, lang, width, len(backends), [w.upper() if w != "load" else "load" for w in ROWS],
              "ops/s (log)")
    _save(fig, title, path)
    return True


def latency(runs, durability, path, title):
    """One panel per language: READ latency in workload C and UPDATE latency
    in workload A (average, 95th, 99th percentile) by backend."""
    cases = [("c", "READ"), ("a", "UPDATE")]
    # Only runs of those workloads: a run of others alone (YCSB_WORKLOADS=e)
    # has no latency to draw here, and an empty log-scaled panel is an error.
    rows = [r for r in runs if r.block == "matrix" and r.durability == durability and r.ok
            and r.workload in dict(cases)]
    langs = _languages(rows)
    if not langs:
        return False
    metrics = [("AverageLatency(us)", "avg"), ("95thPercentileLatency(us)", "p95"),
               ("99thPercentileLatency(us)", "p99")]
    fig, axes = plt.subplots(1, len(langs), figsize=(6 * len(langs), 4.5), squeeze=False)
    for ax, lang in zip(axes[0], langs):
        mine = [r for r in rows if r.language == lang]
        backends = [b for b in COLORS if any(r.backend == b for r in mine)]
        groups = [(w, op, m, short) for w, op in cases for m, short in metrics]
        width = 0.8 / max(1, len(backends))
        for i, b in enumerate(backends):
            byw = {r.workload: r for r in mine if r.backend == b}
            xs, ys = [], []
            for j, (w, op, m, _) in enumerate(groups):
                v = byw[w].latency(op, m) if w in byw else None
                if v:
                    xs.append(j + i * width)
                    ys.append(v)
            ax.bar(xs, ys, width, label=NAMES[b], color=COLORS[b])
        _axis(ax, lang, width, len(backends),
              [f"{op[:6]} {w.upper()}\n{short}" for w, op, _, short in groups], "µs (log)")
    _save(fig, title, path)
    return True
