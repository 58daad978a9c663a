"""pixel_grid_mask against its definition on wider shapes (diff review 67 O of 5fb910a4).

5fb910a4 compares the mask with the docstring's definition on shapes up to 8 x 29; there a
could_win that tries only the count floor(q HW) (not floor(q HW) - 1, + 1, + 2) passed its
500 cases, measured by mutating metrics.py in a worktree, yet picked another mask than the
definition on (5, 27, 0.9374...), (5, 50, 0.0312...), (8, 41, 0.9443...) and others: a lattice
whose count floor(q HW) + 1 beats the best was never built (5 such cases in a minute of random
shapes up to 39 x 59). Those cases fail that mutant; seeded shapes up to 39 x 59 with fractions
anywhere between two counts are checked beside them (they pass on the mutant: it rarely errs)."""

import numpy as np
from test_regions_review67_pixel_grid_identity import _defined

from trustlab.explain.regions.metrics import pixel_grid_mask

FOUND = [
    (5, 27, 0.937429217870874),
    (8, 41, 0.9443271932156678),
    (5, 50, 0.0312014157005438),
    (15, 59, 0.023299824825872142),
    (8, 43, 0.9666194560069142),
]


def test_wider_masks_are_the_ones_the_definition_picks():
    rng = np.random.default_rng(1)
    cases = list(FOUND)
    for _ in range(60):
        h, w = int(rng.integers(1, 40)), int(rng.integers(1, 60))
        hw = h * w
        for q in (
            float(rng.random()),
            (int(rng.integers(0, hw)) + float(rng.uniform(0.3, 0.7))) / hw,
            int(rng.integers(1, hw + 1)) / hw,
        ):
            cases.append((h, w, min(max(q, 1e-12), 1.0)))
    for h, w, q in cases:
        assert np.array_equal(pixel_grid_mask((h, w), q), _defined(h, w, q)), (h, w, q)
