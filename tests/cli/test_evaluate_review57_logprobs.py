"""Log-probabilities given as probabilities: the error says which option reads them.

A row that does not sum to 1 was answered with "pass --from-logits for logits", but a negative
entry (log-probabilities, the form the docs give LLM option scores in) only with "expected a
probability (>= 0)", naming no way out.
"""

import numpy as np
import pytest

from cli_helpers import one_line
from trustlab.errors import InputError
from trustlab.evaluation import rank_models

LOG_P = np.log(np.array([[0.7, 0.3], [0.2, 0.8], [0.6, 0.4]]))


def test_negative_outputs_point_to_from_logits():
    with pytest.raises(InputError, match=r"outputs\['a'\]\[0, 0\]: .*pass from_logits=True"):
        rank_models({"a": LOG_P, "b": LOG_P[::-1].copy()})
    ranked = rank_models({"a": LOG_P, "b": LOG_P[::-1].copy()}, from_logits=True, n_bootstrap=0)
    assert ranked.scores.shape == (2,)


def test_the_cli_names_its_option(run, tmp_path):
    for name, values in (("a", LOG_P), ("b", LOG_P[::-1])):
        np.save(tmp_path / f"{name}.npy", values)
    code, _, err = run("evaluate", "rank", "-p", tmp_path / "a.npy", "-p", tmp_path / "b.npy")
    line = one_line(err)
    assert code == 2
    assert "--predictions['a'][0, 0]" in line and "pass --from-logits for logits" in line
