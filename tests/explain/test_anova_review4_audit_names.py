"""The audit's ANOVA-TPNN section on columns whose names hold " & ", the joiner of a pair's
component name: with columns a, b and "a & b" the estimator refuses the names, so the section
renames such columns for its model and says so."""

import numpy as np
import pandas as pd
from test_anova_tpnn_audit import synthetic_context

from trustlab.audit.sections import anova_tpnn as section


def test_a_column_named_like_a_pair_is_renamed_with_a_note():
    rng = np.random.default_rng(3)
    n = 160
    X = pd.DataFrame(
        {
            "a": rng.normal(size=n),
            "b": rng.normal(size=n),
            "a & b": rng.normal(size=n),
            "a&b": rng.normal(size=n),  # the first new name is taken
        }
    )
    y = np.where(X["a"] + X["a & b"] > 0, "q", "p")
    ctx = synthetic_context(X[:120], X[120:], y[:120], y[120:])
    result = section.build(ctx)
    names = result.data["components"]
    assert len(names) == len(set(names)) == 4 + 6
    assert "a&b (2)" in names and "a & b" in names  # the renamed column and the pair of a, b
    assert any("'a & b' as 'a&b (2)'" in note for note in result.data["notes"])
