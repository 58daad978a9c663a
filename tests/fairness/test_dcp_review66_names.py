"""Names given to the DCP functions (``labels=``, ``groups=``) are a sequence in order (review 66).

Before, check_names (dcp_from_confusion, dcp_from_aggregates) and check_labels (dcp_inputs,
multiclass_dcp) read any value as names (measured): ``labels=5`` or ``groups=3`` stopped on
Python's raw TypeError "'int' object is not iterable" and ``labels=np.array(5)`` on "iteration
over a 0-d array"; a 0-d array of text was read as the characters of its string
(``labels=np.array("ab")`` named the classes 'a' and 'b'); a set paired its names with positions in its hash order
(``groups={"x", "y"}``); a missing name was kept (``labels=[np.nan, 1]`` gave a class nan, written
null in to_dict; ``dcp_inputs(..., labels=[0, 1, np.nan])`` added an empty class nan, and the CLI's
``--labels nan,0,1,2`` did too, exit 0); a generator given to dcp_inputs was spent on y_true and
then blamed y_pred ("expected values among labels=[]").

Now each is an InputError naming the argument: "labels: expected a sequence of names in order (a
list, tuple or array), got 5" and "labels: expected no missing names, got nan at index 2"; lists,
tuples, arrays, Series and strings (``groups="abc"``, one name per character) are read as before,
and a generator of labels is read once.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cli_helpers import one_line
from cli_helpers import run_main as run
from trustlab.errors import InputError
from trustlab.fairness import dcp_from_aggregates, dcp_from_confusion, dcp_inputs, multiclass_dcp

ALPHA = np.array([[[0.8, 0.2], [0.3, 0.7]], [[0.6, 0.4], [0.3, 0.7]]])
W, PI = [0.5, 0.5], [[0.5, 0.5], [0.5, 0.5]]
Y, P, G = [0, 1, 1, 0], [0, 1, 0, 0], ["a", "a", "b", "b"]


def _confusion(**names):
    return dcp_from_confusion(ALPHA, W, PI, random_state=0, local_search=False, **names)


def _aggregates(**names):
    return dcp_from_aggregates(W, PI, PI, n_restarts=1, random_state=0, **names)


@pytest.mark.parametrize("run", [_confusion, _aggregates])
@pytest.mark.parametrize("argument", ["labels", "groups"])
@pytest.mark.parametrize("value", [5, 3.0, np.array(5), np.array("ab"), {"x", "y"}])
def test_names_that_are_no_sequence_are_refused(run, argument, value):
    with pytest.raises(InputError, match="expected a sequence of names in order") as info:
        run(**{argument: value})
    assert info.value.argument == argument


@pytest.mark.parametrize("run", [_confusion, _aggregates])
@pytest.mark.parametrize("value", [[np.nan, 1], [None, "b"], np.array([1.0, np.nan])])
def test_missing_names_are_refused(run, value):
    with pytest.raises(InputError, match="expected no missing names") as info:
        run(groups=value)
    assert info.value.argument == "groups"


@pytest.mark.parametrize("run", [dcp_inputs, multiclass_dcp])
@pytest.mark.parametrize("value", [5, np.array(5), np.array("01"), {0, 1}])
def test_given_labels_that_are_no_sequence_are_refused(run, value):
    with pytest.raises(InputError, match="expected a sequence of names in order") as info:
        run(Y, P, G, labels=value)
    assert info.value.argument == "labels"


def test_a_missing_given_label_is_refused():
    with pytest.raises(InputError, match=r"labels: expected no missing names, got nan at index 2"):
        dcp_inputs(Y, P, G, labels=[0, 1, np.nan])


def test_sequences_of_names_are_read_as_before():
    assert _confusion(labels=("no", "yes"), groups=np.array(["x", "y"])).groups == ("x", "y")
    assert _aggregates(groups=pd.Series([2, 1])).groups == (2, 1)
    assert dcp_inputs(Y, P, G, labels=pd.Series([1, 0])).labels == (1, 0)
    assert _confusion(groups="xy").groups == ("x", "y")


def test_a_generator_of_labels_is_read_once():
    assert dcp_inputs(Y, P, G, labels=(v for v in [0, 1, 2])).labels == (0, 1, 2)


def test_cli_labels_with_nan_are_one_line_and_exit_2(tmp_path, capsys):
    data = tmp_path / "d.csv"
    data.write_text("y,p,g\n0,0,a\n1,1,a\n1,0,b\n0,0,b\n")
    args = ["fairness", "dcp", "--data", data, "--label", "y", "--pred", "p", "--group", "g"]
    code, _, err = run([*args, "--no-aggregate", "--labels", "nan,0,1"], capsys)
    assert code == 2
    assert (
        one_line(err) == "trustlab: error: --labels: expected no missing names, got nan at index 0"
    )
