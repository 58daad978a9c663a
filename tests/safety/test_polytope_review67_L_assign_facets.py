"""assign_facets against the implementation it replaced (c3888d4d, review 67), bit for bit.

c3888d4d kept the facet counts up to date, cached each row's facet order and each histogram's
entropy, and drew ``others[rng.integers(len(others))]`` instead of ``rng.choice(others)``; it
says the assignments and the generator's state afterwards are those of the old loop. The old
function is written out below as the oracle; hypothesis draws values with many ties, NaNs,
thresholds among the values and seeds, with the reassignment path forced (a dominant facet).
"""

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from trustlab.safety.polytope._train import _REASSIGN_TRIES, assign_facets


def _entropy(assigned, n_facets):
    counts = np.bincount(assigned, minlength=n_facets).astype(np.float64)
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log2(p)).sum())


def _old_assign_facets(values, *, reassign, threshold, rng):
    """assign_facets as it was before c3888d4d."""
    assigned = np.argmax(values, axis=1)
    n_facets = values.shape[1]
    if not reassign or n_facets < 2:
        return assigned
    target = 0.5 * math.log2(n_facets)
    entropy = _entropy(assigned, n_facets)
    if entropy >= target:
        return assigned
    for _ in range(_REASSIGN_TRIES):
        i = int(rng.integers(len(assigned)))
        order = np.argsort(-values[i], kind="stable")
        violated = order[values[i, order] > threshold]
        others = violated[violated != assigned[i]] if violated.size > 1 else order[1:2]
        if others.size == 0:
            continue
        trial = assigned.copy()
        trial[i] = int(rng.choice(others))
        trial_entropy = _entropy(trial, n_facets)
        if trial_entropy > entropy:
            assigned, entropy = trial, trial_entropy
    return assigned


def _case(draw_values, n_facets, dominant, threshold, seed, reassign):
    values = np.array(draw_values, dtype=np.float64).reshape(-1, n_facets)
    if dominant is not None:  # every row violates one facet most: low entropy, trials run
        values[:, dominant] += 4.0
    old_rng, new_rng = np.random.default_rng(seed), np.random.default_rng(seed)
    want = _old_assign_facets(values, reassign=reassign, threshold=threshold, rng=old_rng)
    got = assign_facets(values.copy(), reassign=reassign, threshold=threshold, rng=new_rng)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    assert new_rng.bit_generator.state == old_rng.bit_generator.state
    return values, want


@st.composite
def _inputs(draw):
    n_facets = draw(st.integers(1, 6))
    n_rows = draw(st.integers(1, 40))
    cell = st.one_of(
        st.integers(-2, 2).map(float),  # many ties, within and between rows
        st.floats(-3, 3, allow_nan=False, width=32),
        st.just(float("nan")),
    )
    if draw(st.booleans()):
        flat = draw(st.lists(cell, min_size=n_rows * n_facets, max_size=n_rows * n_facets))
    else:  # unshrunk rows of ties from a seed: many trials moved back and forth
        gen = np.random.default_rng(draw(st.integers(0, 2**16)))
        flat = gen.integers(-2, 3, n_rows * n_facets) * draw(st.sampled_from([0.5, 1.0]))
    dominant = draw(st.one_of(st.none(), *[st.integers(0, n_facets - 1)] * 3))
    threshold = draw(st.one_of(st.sampled_from([-1.0, 0.0, 0.5, 2.0, 4.0]), st.floats(-3, 6)))
    return flat, n_facets, dominant, threshold, draw(st.integers(0, 2**32)), draw(st.booleans())


@settings(max_examples=80, deadline=None, derandomize=True)
@given(_inputs())
def test_assign_facets_is_the_old_loop_bit_for_bit_and_leaves_rng_where_it_did(case):
    _case(*case)


def test_the_oracle_comparison_reaches_moves_to_every_kind_of_other_facet():
    """The reassignment moves rows here (two or more violated facets, and a runner-up), so the
    comparison above is not only of argmax."""
    rng = np.random.default_rng(5)
    moved = 0
    for seed in range(20):
        n_facets = 1 + seed % 5
        values = rng.integers(-2, 3, size=(12, n_facets)).astype(float)
        values[:, 0] += 4.0
        for threshold in (0.0, 3.0, 10.0):
            _, want = _case(values.ravel(), n_facets, None, threshold, seed, True)
            moved += int((want != np.argmax(values, axis=1)).sum())
    assert moved > 20
