"""The SHAP beeswarm draws rows whose feature value is missing (review: NaN colour values took
the colour map's transparent "bad" colour, so those rows' dots vanished, and a feature missing in
every row warned "All-NaN slice")."""

import warnings

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402

from trustlab.explain import plot_shap_summary  # noqa: E402


def test_rows_with_a_missing_value_are_drawn_grey():
    rng = np.random.default_rng(0)
    phi = rng.normal(size=(50, 3))
    X = rng.normal(size=(50, 3))
    X[:20, 0] = np.nan
    X[:, 2] = np.nan  # missing in every row
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ax = plot_shap_summary(phi, X, ["a", "b", "c"])
    ax.figure.canvas.draw()
    for collection in ax.collections:
        colours = collection.get_facecolors()
        assert len(colours) == 50 and (colours[:, 3] > 0).all()
    grey = matplotlib.colors.to_rgba("tab:gray")
    by_label = dict(zip([t.get_text() for t in ax.get_yticklabels()], ax.collections, strict=True))
    a = by_label["a"].get_facecolors()
    np.testing.assert_allclose(a[:20], [grey] * 20)
    assert not np.allclose(a[20:], grey)
    np.testing.assert_allclose(by_label["c"].get_facecolors(), [grey] * 50)
