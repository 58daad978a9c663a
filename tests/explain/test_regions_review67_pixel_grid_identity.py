"""pixel_grid_mask returns the mask of its own definition (diff review 67 J of d05fdd91/eb9c3909).

d05fdd91 and eb9c3909 made pixel_grid_mask fast by building only the lattices whose possible
kept counts could beat the best one; their test checks the shift and three kept counts, so a
filter that skipped a lattice it should build went unnoticed by every test but one count
(measured: replacing could_win by 'never' failed only the (3, 20000) count). Here the mask is
compared, on seeded random shapes and fractions, with the docstring's definition computed
plainly: every lattice and complement with p <= W and the p next to 1/q and 1/(1 - q), the
shift maximising the shortest vector by the minimum over 0 < i < p, the least key
(|mean - q|, mean, complement, p). (J's check against the file before d05fdd91: thousands of
random cases, no difference.)
"""

from functools import cache

import numpy as np

from trustlab.explain.regions.metrics import pixel_grid_mask


@cache
def _shift(p):
    if p <= 2:
        return p - 1 if p == 2 else 0
    i = np.arange(1, p)
    k = np.arange(p)[:, None]
    r = (k * i) % p
    return int(np.argmax(np.minimum(p * p, (i * i + np.minimum(r, p - r) ** 2).min(1))))


def _defined(h, w, q):
    candidates = {(c, p) for p in range(1, w + 1) for c in (False, True) if not (c and p < 2)}
    for c, base in ((False, 1 / q), (True, 1 / (1 - q) if q < 1 else np.inf)):
        if np.isfinite(base):
            centre = min(int(np.floor(base)), h * w)
            candidates |= {
                (c, p)
                for p in range(centre - 1, centre + 3)
                if 1 <= p <= h * w and not (c and p < 2)
            }
    best = None
    for c, p in candidates:
        on = (np.arange(w)[None, :] + _shift(p) * np.arange(h)[:, None]) % p == 0
        mask = ~on if c else on
        key = (abs(mask.mean() - q), mask.mean(), c, p)
        if best is None or key < best[0]:
            best = (key, mask)
    return best[1]


def test_the_mask_is_the_one_its_definition_picks():
    rng = np.random.default_rng(67)
    for _ in range(100):
        h, w = int(rng.integers(1, 9)), int(rng.integers(1, 30))
        hw = h * w
        for q in (
            float(rng.random()),
            float(10 ** rng.uniform(-4, 0)),
            int(rng.integers(1, hw + 1)) / hw,  # a count the grid can hold exactly
            (int(rng.integers(0, hw)) + 0.5) / hw,  # halfway between two counts
            1 - 1 / int(rng.integers(2, 2 * w + 3)),
        ):
            q = min(max(q, 1e-12), 1.0)
            assert np.array_equal(pixel_grid_mask((h, w), q), _defined(h, w, q)), (h, w, q)
