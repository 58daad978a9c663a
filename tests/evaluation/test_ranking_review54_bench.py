"""benchmarks/bench_ranking.py times its configurations fairly (review 54).

The first large computation in a process pays a warm-up (allocator, threads): timed first,
"no labels" came out slower than "with labels", which does more work. A fake clock and a fake
``rank_models`` whose first call is slow stand in for the real ones (no time is asserted).
"""

from __future__ import annotations

import importlib.util
import re
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_ranking.py"


def _load():
    spec = importlib.util.spec_from_file_location("bench_ranking_review54", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_labels_and_no_labels_are_both_timed_warm(monkeypatch, capsys):
    bench = _load()
    clock = SimpleNamespace(now=0.0, calls=0)

    def fake_rank_models(outputs, *, score, labels=None, n_bootstrap, random_state):
        clock.calls += 1
        clock.now += 10.0 if clock.calls == 1 else (2.0 if labels is not None else 1.0)
        m = len(outputs)
        return SimpleNamespace(
            scores=np.zeros(m),
            score_intervals=np.tile([0.0, 1.0], (m, 1)),
            spearman=1.0,
            kendall=1.0,
        )

    def fake_reference(outputs, n_bootstrap, seed):
        m = len(outputs)
        return np.zeros(m), np.tile([0.0, 1.0], (m, 1))

    monkeypatch.setattr(bench, "rank_models", fake_rank_models)
    monkeypatch.setattr(bench, "reference", fake_reference)
    monkeypatch.setattr(bench, "kernel_comparison", lambda *args, **kwargs: None)
    monkeypatch.setattr(time, "perf_counter", lambda: clock.now)
    monkeypatch.setattr(sys, "argv", ["bench_ranking.py", "--quick"])
    bench.main()
    out = capsys.readouterr().out

    def seconds(label: str) -> float:
        return float(re.search(re.escape(label) + r":\s+([0-9.]+) s", out).group(1))

    assert seconds("trustlab rank_models (no labels)") == 1.0  # not the cold first call
    assert seconds("trustlab rank_models (with labels)") == 2.0
    assert seconds("trustlab rank_models, first call") == 10.0  # reported on its own


def test_fastest_alternates_the_order_of_the_runs():
    bench = _load()
    order = []
    best = bench.fastest({"a": lambda: order.append("a"), "b": lambda: order.append("b")}, 3)
    assert order == ["a", "b", "b", "a", "a", "b"]
    assert set(best) == {"a", "b"}
