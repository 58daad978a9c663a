"""Review 56: the number of restarts is ``n_restarts`` (the strategic learners' and scikit-learn's
``n_<thing>`` style); ``restarts=``, the old name, works for one release with a FutureWarning, and
giving both is refused."""

import inspect
import warnings

import pytest

from trustlab.errors import InputError
from trustlab.fairness import dcp_from_aggregates, multiclass_dcp

AGGREGATES = ([0.4, 0.6], [[0.3, 0.7], [0.5, 0.5]], [[0.25, 0.75], [0.55, 0.45]])
RECORDS = ([0, 1, 2, 0, 1, 2, 0, 1, 2, 0], [0, 1, 2, 1, 1, 0, 2, 1, 2, 0], list("aaaaabbbbb"))
CALLS = {
    "dcp_from_aggregates": lambda **kw: dcp_from_aggregates(*AGGREGATES, random_state=3, **kw),
    "multiclass_dcp": lambda **kw: multiclass_dcp(*RECORDS, random_state=3, **kw),
}


@pytest.mark.parametrize("function", [dcp_from_aggregates, multiclass_dcp])
def test_the_signature_says_n_restarts_only(function):
    parameters = inspect.signature(function).parameters
    assert parameters["n_restarts"].default == 5
    assert "restarts" not in parameters


@pytest.mark.parametrize("name", sorted(CALLS))
def test_the_old_name_warns_and_gives_the_same_result(name):
    call = CALLS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new name warns about nothing
        new = call(n_restarts=3).to_dict()
    with pytest.warns(FutureWarning, match="^restarts is deprecated; use n_restarts$") as record:
        old = call(restarts=3).to_dict()
    assert record[0].filename == __file__  # the warning points at the caller
    assert old == new
    runs = (
        new["restart_values"]
        if name == "dcp_from_aggregates"
        else new["aggregate"]["restart_values"]
    )
    assert len(runs) == 3  # the value was passed on, not the default 5


@pytest.mark.parametrize("name", sorted(CALLS))
def test_both_names_are_refused_naming_the_old_one(name):
    with pytest.raises(InputError, match="^restarts: expected n_restarts only") as err:
        CALLS[name](restarts=2, n_restarts=2)
    assert err.value.argument == "restarts"
