"""Review 54: a fit whose validation share rounds to one row holds out two (one row has no
variance, so its FVU was NaN and its dead share counted the latents one row leaves out)."""

import math

import numpy as np
import pytest

from trustlab.interpret import SparseAutoencoder


@pytest.mark.parametrize(("n", "fraction"), [(20, 0.05), (60, 0.02)])
def test_one_held_out_row_becomes_two(n, fraction):
    X = np.random.default_rng(54).normal(size=(n, 6))
    sae = SparseAutoencoder(n_latents=8, k=2, max_epochs=2, batch_size=8,
                            validation_fraction=fraction, random_state=4).fit(X)  # fmt: skip
    fit = sae.fit_
    assert fit.n_held_out == 2 and fit.n_rows == n
    assert math.isfinite(fit.fvu) and fit.to_dict()["fvu"] is not None
    # the metrics are those of the two held-out rows (the split is the estimator's first draw)
    held = np.sort(np.random.default_rng(4).permutation(n)[:2])
    R = X[held]
    recon = sae.reconstruct(R).astype(np.float64)
    expected = ((R - recon) ** 2).sum() / ((R - R.mean(axis=0)) ** 2).sum()
    assert fit.fvu == pytest.approx(expected, rel=1e-5)


def test_no_held_out_rows_stays_none():
    X = np.random.default_rng(5).normal(size=(10, 4))  # round(0.5) = 0 rows held out
    fit = SparseAutoencoder(n_latents=4, k=2, max_epochs=1, batch_size=8).fit(X).fit_
    assert fit.n_held_out == 0
