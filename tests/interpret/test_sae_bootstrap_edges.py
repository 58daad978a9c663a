"""The scorers' bootstrap intervals when no draw holds both classes: NaN, not an IndexError.

With two activating and two non-activating examples, one bootstrap draw holds a single class
one time in eight; with ``n_bootstrap=1`` some seeds draw only such a sample, and the interval
was ``np.percentile`` of nothing (IndexError) for detection, fuzzing and the ranking scorers.
"""

from __future__ import annotations

import math

import numpy as np

from trustlab.interpret import detection_score, fuzzing_score
from trustlab.interpret.sae.examples import Example, LatentExamples
from trustlab.interpret.sae.ranking import _result

SEEDS = range(40)


def _examples() -> LatentExamples:
    def example(quantile):
        fires = quantile is not None
        acts = np.array([0, 1, 0, 0] if fires else [0, 0, 0, 0], np.float32)
        return Example(0, 0, np.array([1, 2, 3, 4]), acts, quantile)

    return LatentExamples(
        latent=0, n_activating=2, max_activation=1.0, explainable=False, quantile_edges=(1.0,),
        test=(example(0), example(1)), not_active=(example(None), example(None)),
    )  # fmt: skip


class _Judge:
    """Answers the same list whatever it is shown."""

    name = "judge"

    def generate(self, prompts, max_new_tokens, **kwargs):
        return ["[1, 1, 0, 0]" for _ in prompts]


def test_classification_interval_is_nan_when_no_draw_has_both_classes():
    examples = _examples()
    seen_nan = 0
    for seed in SEEDS:
        for scoring in (detection_score, fuzzing_score):
            found = scoring(examples, "x", _Judge(), lambda t: f" t{t}", batch_size=4,
                            n_bootstrap=1, random_state=seed)  # fmt: skip
            assert found.n_failed == 0
            low, high = found.interval
            if math.isnan(low):
                seen_nan += 1
                assert math.isnan(high)
            else:
                assert 0 <= low <= high <= 1
    assert seen_nan > 0  # the case happened


def test_ranking_interval_is_nan_when_no_draw_has_both_classes():
    examples = _examples()
    activating = np.array([True, True, False, False])
    seen_nan = 0
    for seed in SEEDS:
        found = _result("embedding", examples, "x", np.array([0.9, 0.8, 0.1, 0.2]), activating,
                        np.array([0, 1, -1, -1]), 1, seed)  # fmt: skip
        assert found.auroc == 1.0
        low, high = found.interval
        if math.isnan(low):
            seen_nan += 1
            assert math.isnan(high)
        else:
            assert low == high == 1.0
    assert seen_nan > 0
