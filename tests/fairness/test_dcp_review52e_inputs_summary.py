"""DCPInputs.summary: its 'total weight' says it is the record count unless sample_weight was
given (the CLI, which has no weight option, printed 'total weight 8' for eight rows)."""

from trustlab.fairness import dcp_inputs


def test_the_total_weight_says_what_it_counts():
    args = ([0, 1, 1, 0, 1, 0, 0, 1], [0, 1, 0, 0, 1, 1, 0, 1], ["a"] * 4 + ["b"] * 4)
    plain = dcp_inputs(*args).summary().splitlines()[0]
    assert "total weight 8 (the number of records, or the sum of sample_weight" in plain
    weighted = dcp_inputs(*args, sample_weight=[2.5] * 8).summary().splitlines()[0]
    assert "total weight 20 (" in weighted
