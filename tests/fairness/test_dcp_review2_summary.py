"""DCPResult.summary's "most affected group" (second review pass)."""

import numpy as np

from trustlab.fairness import dcp_from_confusion, multiclass_dcp

FAIR = [[0.9, 0.1], [0.1, 0.9]]
OFF = [[0.1, 0.9], [0.9, 0.1]]


def test_a_group_of_weight_zero_is_not_the_most_affected():
    """It was named '(88.89 % of the group treated unfairly)' beside a DCP of 0."""
    result = dcp_from_confusion([FAIR, OFF], [1.0, 0.0], [[0.5, 0.5]] * 2, random_state=0)
    assert result.upper == 0.0
    assert result.unfair_fraction[1] > 0.5  # defined, but weighs nothing
    assert "most affected group: none (no group is treated unfairly)" in result.summary()
    # the same through records: a sample weight of 0 for every row of group "b" (beside two
    # weighted groups: with one, multiclass_dcp refuses the weights since review 54)
    records = multiclass_dcp(
        [0, 1, 0, 1] * 3,
        [0, 1, 0, 1, 1, 0, 1, 0, 0, 1, 0, 1],
        ["a"] * 4 + ["b"] * 4 + ["c"] * 4,
        sample_weight=[1] * 4 + [0] * 4 + [1] * 4,
        aggregate=False,
        random_state=0,
    )
    assert records.known.upper == 0.0
    assert "most affected group: none" in records.known.summary()


def test_the_most_affected_group_says_its_share_of_the_population():
    """A one-row group reads 100 % unfair; the line now says how little of the population it is."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 299)
    pred = np.where(rng.random(299) < 0.9, y, rng.integers(0, 3, 299))
    groups = rng.choice(["a", "b"], 299).tolist()
    result = multiclass_dcp(
        [*y, 0], [*pred, 1], [*groups, "solo"], aggregate=False, random_state=0
    ).known
    worst = int(np.argmax(result.unfair_fraction))
    assert result.groups[worst] == "solo"
    share = 100 * result.group_weights[worst]
    assert f"the group is {share:.2f} % of the population)" in result.summary()
    assert "the group is 0.33 % of the population" in result.summary()
