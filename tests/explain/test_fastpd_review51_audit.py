"""The audit's FastPD section on a binary boosting model (review 51: the PD figure's caption said
'one line per class' over its one line, the log-odds of the positive class, and did not say which
class that is; a plot of one line has no legend)."""

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier

from trustlab.audit.context import AuditContext
from trustlab.audit.sections import fastpd as section


def _context(models):
    rng = np.random.default_rng(2)
    X = pd.DataFrame(rng.normal(size=(240, 3)), columns=["a", "b", "c"])
    y = np.where(X.a * X.b > 0, "yes", "no")
    g = np.where(rng.random(240) < 0.5, "f", "m")
    fitted = {name: m.fit(X[:160], y[:160]) for name, m in models.items()}
    return AuditContext(
        dataset="synthetic",
        label="y",
        group="g",
        labels=np.unique(y),
        feature_names=["a", "b", "c"],
        X_train=X[:160],
        X_test=X[160:],
        y_train=y[:160],
        y_test=y[160:],
        g_train=g[:160],
        g_test=g[160:],
        models=fitted,
    )


def test_the_pd_caption_says_which_class_a_single_line_is():
    built = section.build(
        _context(
            {
                "boosting": HistGradientBoostingClassifier(max_iter=10),
                "forest": RandomForestClassifier(10, max_depth=4, random_state=0),
            }
        )
    )
    captions = [b.caption for b in built.blocks if getattr(b, "caption", "").startswith("Partial")]
    boosting, forest = captions
    assert built.data["boosting"]["output_names"] == ["yes"]
    assert "one line per class" not in boosting and "class yes" in boosting
    assert "one line per class" in forest
