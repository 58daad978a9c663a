"""mc_dropout_probabilities (trustlab.federated.uefl, in its __all__) checks ``passes``
(review 66).

Measured on the old uefl.py with a 3-class MLP model and 5 rows: passes=0 and passes=-1 stopped
with numpy's raw "ValueError: need at least one array to stack", passes=2.5 with a raw
"TypeError: 'float' object cannot be interpreted as an integer", and passes=True ran one pass
without a word. Now each is "passes: expected an integer >= 1, got ..." (InputError, argument
passes); integer passes give the same arrays as before.
"""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.federated import UEFLConfig
from trustlab.federated.model import build_model
from trustlab.federated.uefl import mc_dropout_probabilities

torch = pytest.importorskip("torch")

X = np.random.default_rng(0).random((5, 8)).astype(np.float32)


def _model():
    return build_model(UEFLConfig(encoder="mlp", dropout=0.3).model_spec(8, 3), random_state=0)


@pytest.mark.parametrize("passes", [0, -1, 2.5, True, "3"])
def test_passes_that_are_no_positive_integer_are_refused_naming_passes(passes):
    with pytest.raises(InputError, match="passes: expected an integer >= 1") as info:
        mc_dropout_probabilities(_model(), X, passes)
    assert info.value.argument == "passes"


def test_integer_passes_are_stacked_as_before():
    model = _model()
    out = mc_dropout_probabilities(model, X, np.int64(3), random_state=1)
    assert out.shape == (3, 5, 3) and np.allclose(out.sum(-1), 1.0)
    again = mc_dropout_probabilities(model, X, 3, random_state=1)
    assert np.array_equal(out, again)
