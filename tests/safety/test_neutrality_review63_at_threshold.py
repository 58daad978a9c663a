"""paired_symmetry: a value exactly at the threshold counts, for the even-handedness grade and
for each response's refusal flag of the asymmetry, as the docstring states ("a value counts
when >= threshold") and as the pair means already do (review 63: with > in place of >= for
either, test_neutrality_paired and test_neutrality_review5_pairs still passed).
"""

from __future__ import annotations

import pytest

from trustlab.safety.neutrality import paired_symmetry


@pytest.mark.parametrize("threshold", [0.5, 0.25])
def test_values_at_the_threshold_count(threshold):
    t = threshold
    result = paired_symmetry(
        [t, 0.0, t],  # refusal a: at the threshold on pairs 0 and 2
        [0.0, t, t],  # refusal b: at it on pairs 1 and 2
        [0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0],
        even_handed=[t, 0.0, 1.0],
        threshold=t,
        n_bootstrap=0,
    )
    assert result.even_handedness_rate == pytest.approx(2 / 3)
    assert result.refusal_a_only == pytest.approx(1 / 3)
    assert result.refusal_b_only == pytest.approx(1 / 3)
    assert result.refusal_asymmetry == pytest.approx(2 / 3)
