"""Review 3: user silos keep the default name "silo"; the summary and the plots must still tell
them apart (the extension lines name silos by index)."""

from __future__ import annotations

import numpy as np

from trustlab.federated import simulate_uefl
from trustlab.federated.silos import Silo


def _silo(rng, n_train, name=None):
    extra = {} if name is None else {"name": name}
    return Silo(rng.random((n_train, 6)).astype(np.float32), rng.integers(0, 2, n_train),
                rng.random((4, 6)).astype(np.float32), rng.integers(0, 2, 4), **extra)  # fmt: skip


def _run(silos):
    return simulate_uefl(silos=silos, rounds=1, rounds_plus=1, max_iterations=1, local_epochs=1,
                         encoder="mlp", seg=1, evaluate_every_round=False)  # fmt: skip


def test_unnamed_user_silos_are_told_apart_in_the_summary_and_plot():
    rng = np.random.default_rng(0)
    result = _run([_silo(rng, 3), _silo(rng, 9), _silo(rng, 5)])
    rows = result.summary().splitlines()
    table = rows[rows.index(next(r for r in rows if r.startswith("final accuracy"))) + 2 :][:3]
    assert [row.split()[0] for row in table] == ["0:", "1:", "2:"]
    ax = result.plot()
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"0: silo", "1: silo", "2: silo"} <= set(legend)


def test_distinct_names_are_shown_as_they_are():
    rng = np.random.default_rng(1)
    result = _run([_silo(rng, 6, "north"), _silo(rng, 6, "south")])
    assert "  north" in result.summary() and "  south" in result.summary()
