"""Review 67 of pixel_grid_mask on wide images with tiny fractions.

Measured on the old file: pixel_grid_mask((1, 10**5), 1e-5) did not finish in 60 s (and
(1, 10**6), 1e-6 ran for minutes): the lattice shift of period p took the minimum over all
0 < i < p for each of the p shifts (O(p^2), p = 1 / kept_fraction), and every p in (W/2, W]
was built as a full mask because its per-row bound floor(W/p)..ceil(W/p) held q. Now the shift
comes from a Lagrange reduction of every shift at once (O(p log p), the same integer lengths),
one row needs no shift, and row 0's exact count ceil(W/p) tightens the bound: 0.03 s and about
1 s. The masks are the same as before (619 shapes, fractions and shifts compared with the old
file); here the shift against the old O(p^2) minimum and the docstring's example.

Follow-up: (3, 20000) at 1.01e-4 (between lattices) still took 35 s after d05fdd91, building
each p in (W/2, W) whose count range held q. Now a p is built only if a count in its range gives
a key below the best's (the key from the count is the mask's), 0.3 s; masks unchanged (619
listed cases and 400 random shapes and fractions compared with the old file)."""

import signal

import numpy as np
import pytest

from trustlab.explain.regions.metrics import _lattice_shift, pixel_grid_mask


def _shift_by_minimum(p):
    if p <= 2:
        return p - 1 if p == 2 else 0
    i = np.arange(1, p)
    best = [min(p * p, int((i * i + np.minimum((k * i) % p, p - (k * i) % p) ** 2).min()))
            for k in range(p)]  # fmt: skip
    return int(np.argmax(best))


def test_the_shift_is_the_one_of_the_shortest_vector_minimum():
    assert [_lattice_shift(p) for p in range(1, 120)] == [
        _shift_by_minimum(p) for p in range(1, 120)
    ]


def test_the_documented_mask_is_unchanged():
    m = pixel_grid_mask((4, 5), 0.2)
    assert m.astype(int).tolist() == [
        [1, 0, 0, 0, 0], [0, 0, 0, 1, 0], [0, 1, 0, 0, 0], [0, 0, 0, 0, 1],
    ]  # fmt: skip


def _stop(signum, frame):
    raise TimeoutError("pixel_grid_mask ran past its time")


@pytest.mark.parametrize(
    ("shape", "q", "kept"),
    [((1, 10**5), 1e-5, 1), ((3, 20000), 1e-4, 6), ((3, 20000), 1.01e-4, 6)],
)
def test_a_wide_image_with_a_tiny_fraction_is_quick(shape, q, kept):
    before = signal.signal(signal.SIGALRM, _stop)
    signal.alarm(10)  # the new file takes well under a second, the old one minutes
    try:
        mask = pixel_grid_mask(shape, q)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, before)
    assert mask.shape == shape and int(mask.sum()) == kept
