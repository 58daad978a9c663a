"""DCPInputs.summary: its first line says whether the records are weighted (it read 'total weight
8' for eight unweighted rows, later 'total weight 8 (the number of records, or the sum of
sample_weight when one was given)', which did not say which)."""

from trustlab.fairness import dcp_inputs


def test_the_total_weight_says_what_it_counts():
    args = ([0, 1, 1, 0, 1, 0, 0, 1], [0, 1, 0, 0, 1, 1, 0, 1], ["a"] * 4 + ["b"] * 4)
    plain = dcp_inputs(*args).summary().splitlines()[0]
    assert plain == "DCP inputs: 2 groups, 2 labels, 8 records, unweighted"
    weighted = dcp_inputs(*args, sample_weight=[2.5] * 8).summary().splitlines()[0]
    assert weighted.endswith("records weighted by sample_weight (total weight 20 over 8 records)")
