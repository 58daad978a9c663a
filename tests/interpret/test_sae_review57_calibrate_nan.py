"""Review 57: a KL that turns NaN at high strengths (the intervention overflowed the model)
does not make the strength search try NaN strengths or report a NaN KL as its choice."""

import math

from trustlab.interpret.sae import calibrate_strength


def test_a_nan_kl_counts_as_too_strong():
    result = calibrate_strength(lambda s: math.nan if s > 50 else 1e-4 * s)
    strengths = [s for s, _ in result.evaluations]
    # old: after (100, NaN) and (10, 0.001) every further strength was NaN, and the result was
    # strength 100 with KL NaN
    assert all(math.isfinite(s) for s in strengths)
    assert math.isfinite(result.kl) and result.strength < 50 and not result.converged
    # a KL that reaches the target below the NaN region is found
    found = calibrate_strength(lambda s: math.nan if s > 500 else 0.01 * s)
    assert found.converged and abs(found.kl - 0.5) <= 0.05
