"""README.md's DSI paragraph: "works in their span (the benchmark solves 10,000 output
dimensions)". At the benchmark's size (benchmarks/bench_dsi.py: n = 200 differences in d = 10,000)
the covariance is checked here without the solver's own bookkeeping: it lies in the span of the
differences, meets every constraint delta' Sigma^+ delta <= 1, and its trace equals the value of
the Lagrange dual 2 tr(M(mu)^1/2) - sum(mu), M(mu) = sum_i mu_i delta_i delta_i', at the solver's
multipliers (so it is optimal, not just feasible). The control is isotropic noise in the same
span, the least that meets the constraints: it needs a larger trace.
"""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.privacy import optimal_gaussian_covariance


@pytest.fixture(scope="module")
def benchmark_problem():
    rng = np.random.default_rng(0)
    n, d = 200, 10_000
    deltas = rng.normal(size=(n, d)) * rng.uniform(0.2, 3.0, size=(n, 1))
    return deltas, optimal_gaussian_covariance(deltas)


def test_the_covariance_lies_in_the_span_and_meets_every_constraint(benchmark_problem):
    deltas, cov = benchmark_problem
    root = cov.basis @ cov.factor  # Sigma = root root'
    assert root.shape == (10_000, 200)
    coef, *_ = np.linalg.lstsq(root, deltas.T, rcond=None)
    assert np.abs(root @ coef - deltas.T).max() <= 1e-8 * np.abs(deltas).max()  # in the span
    squared = (coef**2).sum(axis=0)  # delta' Sigma^+ delta
    assert squared.max() <= 1 + 1e-6
    assert squared.max() >= 1 - 1e-6  # some constraint binds (else the trace could shrink)


def test_the_trace_equals_the_dual_value_and_beats_isotropic_noise(benchmark_problem):
    deltas, cov = benchmark_problem
    trace = float((cov.factor**2).sum())  # tr(root root') with an orthonormal basis
    q, _ = np.linalg.qr(deltas.T)
    coords = deltas @ q  # the differences in an orthonormal basis of their span
    mu = np.asarray(cov.multipliers, dtype=float)
    assert mu.shape == (200,) and mu.min() >= 0
    eig = np.linalg.eigvalsh(coords.T @ (mu[:, None] * coords))
    dual = 2 * np.sqrt(np.clip(eig, 0, None)).sum() - mu.sum()
    assert trace == pytest.approx(dual, rel=1e-6)
    isotropic = 200 * float((deltas**2).sum(axis=1).max())  # c I in the span, c = max |delta|^2
    assert trace == pytest.approx(cov.trace, rel=1e-9)
    assert isotropic / trace > 2
