"""Review 64: embed_texts normalised each row by np.linalg.norm, whose squares overflow for a
row of entries near 1e200 (norm inf: the row came back as zeros) and underflow near 1e-200
(norm 0: the row came back unnormalised). Such rows are now scaled by their largest entry first;
other rows are divided by their norm exactly as before."""

from __future__ import annotations

import warnings

import numpy as np

from trustlab.llm.embeddings import embed_texts


class _Rows:
    def __init__(self, rows):
        self.rows = np.array(rows, dtype=float)

    def encode(self, texts):
        return self.rows


def test_rows_at_extreme_scales_come_back_unit_length():
    rows = [[1e200, 1e200], [-1e308, 1e308], [1e-200, 1e-200], [3e-170, 4e-170], [5e-324, 0.0]]
    rows += [[3.0, 4.0], [0.0, 0.0]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning either
        out = embed_texts(list("abcdefg"), _Rows(rows))
    h = np.sqrt(0.5)
    expected = [[h, h], [-h, h], [h, h], [0.6, 0.8], [1.0, 0.0], [0.6, 0.8], [0.0, 0.0]]
    np.testing.assert_allclose(out, expected, rtol=1e-15, atol=0)


def test_ordinary_rows_are_divided_by_their_norm_as_before():
    rows = np.random.default_rng(0).normal(size=(5, 7))
    out = embed_texts(list("abcde"), _Rows(rows))
    np.testing.assert_array_equal(out, rows / np.linalg.norm(rows, axis=1, keepdims=True))
