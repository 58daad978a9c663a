"""Review 61: a silo whose local training diverged (learning_rate=1e12 on digits) sent NaN
weights; the server averaged them into every shared array, and the run failed at the next
evaluation with 'probabilities: expected finite values, got nan', naming an argument the user
never passed. The round is now refused naming learning_rate, the silo and the round."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.federated import ProtocolDriver, SiloEvaluation, SiloUpdate, UEFLConfig


class _Engine:
    """Silo 1 returns ``bad`` in its weights at round 2; every evaluation is calm."""

    def __init__(self, bad):
        self.bad = bad

    def train(self, round_no, jobs):
        out = []
        for plan, _ in jobs:
            w = np.full(2, 1.0 + plan.silo, dtype=np.float32)
            if plan.silo == 1 and round_no == 2:
                w[0] = self.bad
            out.append(SiloUpdate(plan.silo, {"w": w, "b": np.zeros(1)}, 10, {"vq-loss": 0.0}))
        return out

    def evaluate(self, round_no, jobs):
        return [SiloEvaluation(plan.silo, 0.5, 0.5, 5) for plan, _ in jobs]


def _driver():
    cfg = UEFLConfig(rounds=3, max_iterations=1, learning_rate=0.5)
    return ProtocolDriver(cfg, 2, {"w": np.zeros(2, np.float32), "b": np.zeros(1)})


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_round_with_non_finite_weights_is_refused_naming_learning_rate(bad):
    driver = _driver()
    driver.step(_Engine(bad))
    with pytest.raises(
        InputError, match=r"^learning_rate: .*got 0\.5 \(silo 1's .* round 2 .* in w\)"
    ):
        driver.step(_Engine(bad))
    assert driver.state.round == 1  # the NaN round was not averaged in


def test_finite_rounds_run_to_the_end():
    driver = _driver()
    driver.run(_Engine(2.0))
    assert driver.finished and np.allclose(driver.arrays["w"], [1.5, 1.5])
