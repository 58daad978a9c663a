"""Labels given to dcp_inputs / multiclass_dcp keep their dtype, and a numpy string is a string
(diff review 66 K of 145202f8).

145202f8 read ``labels=`` through Python values before dcp_inputs checked them against the
records (measured on 145202f8): uint64 class ids beyond 2**63 given as an array (the audit passes
``np.unique`` of its label column) or as numpy scalars, ``[5, 2**64 - 2, 2**64 - 1]``, became the
float64 array numpy makes of such Python ints and were refused as "labels: expected distinct
values"; datetime64 labels became integers and every record was "unknown"; ``np.str_("ab")``,
a string, was refused as "no sequence" where ``"ab"`` is read as its characters. Now a sequence
or array is checked as given (an iterator is still read once) and these read as before 145202f8.
"""

from __future__ import annotations

import numpy as np

from trustlab.fairness import dcp_from_confusion, dcp_inputs, multiclass_dcp

BIG = np.array([5, 2**64 - 2, 2**64 - 1], dtype=np.uint64)
Y_BIG, P_BIG = BIG[[2, 1, 0, 2, 1, 0]], BIG[[2, 1, 1, 2, 1, 0]]
G = np.array(["a", "b", "a", "b", "a", "b"])


def test_uint64_ids_beyond_2_63_given_as_an_array_stay_exact():
    inputs = dcp_inputs(Y_BIG, P_BIG, G, labels=np.unique(Y_BIG))
    assert inputs.labels == (5, 2**64 - 2, 2**64 - 1)
    assert inputs.counts.sum(axis=0).tolist() == [[1, 1, 0], [0, 2, 0], [0, 0, 2]]


def test_uint64_ids_given_as_numpy_scalars_and_through_multiclass_dcp():
    labels = list(np.unique(Y_BIG))  # np.uint64 values
    assert dcp_inputs(Y_BIG, P_BIG, G, labels=labels).labels == (5, 2**64 - 2, 2**64 - 1)
    result = multiclass_dcp(Y_BIG, P_BIG, G, labels=np.unique(Y_BIG), aggregate=False)
    assert result.inputs.labels == (5, 2**64 - 2, 2**64 - 1)


def test_datetime64_labels_cover_their_records():
    days = np.array(["2020-01-01", "2020-01-02"], dtype="datetime64[ns]")
    y, p = days[[0, 1, 0, 1, 0, 1]], days[[0, 1, 1, 1, 0, 0]]
    inputs = dcp_inputs(y, p, G, labels=days)
    assert len(inputs.labels) == 2 and inputs.counts.sum() == 6


def test_a_numpy_string_is_read_as_its_characters_like_a_string():
    alpha = np.array([[[0.8, 0.2], [0.3, 0.7]], [[0.6, 0.4], [0.3, 0.7]]])
    res = dcp_from_confusion(alpha, [0.5, 0.5], [[0.5, 0.5]] * 2, groups=np.str_("xy"))
    assert res.groups == ("x", "y")
    assert dcp_inputs(list("abab"), list("abba"), G[:4], labels=np.str_("ab")).labels == ("a", "b")
