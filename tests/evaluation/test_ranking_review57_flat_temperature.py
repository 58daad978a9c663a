"""Review 57 (second pass): a model whose outputs do not depend on the temperature (uniform
probabilities, equal logits) is not said to have reached an end of the temperature search.

Its NLL is the same at every temperature, so the end test of 74a441b returned 0.01 and the note
said its slice was 'predicted right' and its tempered outputs 'near-certain', though they stay
uniform at any temperature.
"""

import numpy as np

from trustlab.evaluation import rank_models
from trustlab.evaluation._calibration import fit_temperature


def test_equal_logits_get_temperature_one():
    labels = np.arange(30) % 3
    assert fit_temperature(np.zeros((30, 3)), labels) == 1.0


def test_a_uniform_model_gets_no_end_of_search_note():
    rng = np.random.default_rng(57)
    y = rng.integers(0, 3, 90)
    sharp = 4.0 * np.eye(3)[y]  # logits right on every item: its fit reaches 0.01
    uniform = np.zeros((90, 3))  # equal logits: the NLL is log 3 at every temperature, exactly
    res = rank_models(
        {"sharp": sharp, "uniform": uniform},
        labels=y,
        from_logits=True,
        calibration_size=30,
        random_state=2,
    )
    assert res.temperatures["uniform"] == 1.0
    assert res.temperatures["sharp"] == 0.01
    (note,) = [n for n in res.notes if "end of the search" in n]
    assert "for sharp is the lower end" in note and "uniform" not in note
