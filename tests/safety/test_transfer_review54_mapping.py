"""Review 54: the closed-form affine map with fewer paired rows than the source width.

ActivationMap's Notes say that with fewer training rows than d_s + 1 the least-squares problem is
underdetermined and ``lstsq`` returns its minimum-norm solution. Checked here against the
pseudo-inverse of the centred rows, scikit-learn's LinearRegression (which also centres) and
two other exact fits (numpy's lstsq with a column of ones, which minimises the norm of A and b
together, and the minimum-norm map plus a null-space direction): every one fits the rows, the
map's A is the shortest. New seeds (none used elsewhere for the map).
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

from trustlab.safety.transfer import ActivationMap, transfer_vector


@pytest.mark.parametrize(("seed", "n", "d_s", "d_t"), [(541, 12, 40, 30), (542, 3, 8, 5)])
def test_fewer_rows_than_the_width_give_the_minimum_norm_exact_fit(seed, n, d_s, d_t):
    rng = np.random.default_rng(seed)
    S = rng.normal(size=(n, d_s)) * rng.uniform(0.1, 20.0, d_s) + rng.normal(0, 5, d_s)
    T = rng.normal(size=(n, d_t)) + 3.0  # unrelated to S: any exact fit is arbitrary
    m = ActivationMap(kind="affine", validation_fraction=0.0).fit(S, T)
    centred = S - S.mean(axis=0)
    A = (np.linalg.pinv(centred) @ (T - T.mean(axis=0))).T
    np.testing.assert_allclose(m.coef_, A, atol=1e-10)
    np.testing.assert_allclose(m.intercept_, T.mean(axis=0) - A @ S.mean(axis=0), atol=1e-9)
    reference = LinearRegression().fit(S, T)
    np.testing.assert_allclose(m.coef_, reference.coef_, atol=1e-10)
    np.testing.assert_allclose(m.intercept_, reference.intercept_, atol=1e-9)
    # it interpolates the rows
    assert m.fit_.fvu < 1e-20 and m.fit_.cosine == pytest.approx(1.0)
    np.testing.assert_allclose(m._apply(S), T, atol=1e-9)
    # other exact fits are longer
    joint = np.linalg.lstsq(np.c_[S, np.ones(n)], T, rcond=None)[0]
    np.testing.assert_allclose(np.c_[S, np.ones(n)] @ joint, T, atol=1e-8)
    null = np.linalg.svd(centred)[2][-1]  # a direction the centred rows do not span
    shifted = m.coef_ + np.outer(rng.normal(size=d_t), null)
    np.testing.assert_allclose(centred @ shifted.T, centred @ m.coef_.T, atol=1e-9)
    norm = np.linalg.norm(m.coef_)
    assert norm < np.linalg.norm(joint[:-1]) and norm < np.linalg.norm(shifted)
    # a vector carried through it is still A (mean positive - mean negative)
    v = transfer_vector(m, S[:2], S[2:])
    np.testing.assert_allclose(v, m.coef_ @ (S[:2].mean(axis=0) - S[2:].mean(axis=0)), atol=1e-9)
