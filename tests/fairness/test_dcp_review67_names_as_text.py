"""Review 67 of group and label names that print alike (dcp_from_confusion, dcp_from_aggregates).

Measured on the old file: dcp_from_confusion(..., groups=[1, "1"]) was accepted (1 != "1"), and
its summary named "most affected group: '1'" for either, DCPResult.plot drew both bars at the one
category "1"; labels=[1, "1"] the same. (multiclass_dcp already refused such groups from the
data: "groups: expected labels that stay distinct as text".) Now names whose text is the same
are refused by the argument's name; distinct names of mixed types (1 and "a") pass as before."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.fairness import dcp_from_aggregates, dcp_from_confusion

ALPHA = np.array([[[0.8, 0.2], [0.3, 0.7]], [[0.6, 0.4], [0.3, 0.7]]])
W, DIST = [0.5, 0.5], [[0.5, 0.5], [0.5, 0.5]]


@pytest.mark.parametrize("name", ["groups", "labels"])
@pytest.mark.parametrize("names", [[1, "1"], ["1.0", 1.0], [(1, 2), "(1, 2)"]])
def test_names_that_print_alike_are_refused(name, names):
    with pytest.raises(InputError, match=rf"^{name}: expected names that stay distinct as text"):
        dcp_from_confusion(ALPHA, W, DIST, random_state=0, **{name: names})
    with pytest.raises(InputError, match=rf"^{name}: expected names that stay distinct as text"):
        dcp_from_aggregates(W, DIST, DIST, n_restarts=1, random_state=0, **{name: names})


def test_distinct_names_of_mixed_types_pass():
    r = dcp_from_confusion(ALPHA, W, DIST, random_state=0, groups=[1, "a"], labels=["x", 2])
    assert r.groups == (1, "a") and r.labels == ("x", 2)
