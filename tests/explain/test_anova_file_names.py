"""ANOVA-TPNN component PNGs: components whose names differ only in characters a file name does
not keep get distinct files (one overwrote the other)."""

import numpy as np
import pandas as pd
import pytest

from trustlab._results import write_outputs
from trustlab.explain.anova_tpnn import ANOVATPNN
from trustlab.explain.anova_tpnn.results import component_files

pytest.importorskip("torch")


def test_names_that_clash_as_files_get_distinct_files():
    assert component_files(["price ($)", "price (€)", "price (£)", "age"]) == [
        "component_price____.png",
        "component_price_____2.png",
        "component_price_____3.png",
        "component_age.png",
    ]


def test_fit_and_plot_save_one_png_per_component(tmp_path):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"price ($)": rng.normal(size=50), "price (€)": rng.normal(size=50)})
    model = ANOVATPNN(order=1, max_epochs=2, random_state=0).fit(X, X.sum(axis=1))
    summary = model.summarize(X, X.sum(axis=1), top=2)
    pngs = [name for name in summary.files() if name.endswith(".png")]
    assert len(pngs) == 2 and sorted(pngs) == sorted(
        n for n in summary.file_names if n.startswith("component_")
    )
    figures = model.component_figures(["price ($)", "price (€)"])
    saved = write_outputs(figures, tmp_path / "plots")
    assert len(figures.file_names) == 2 == len(set(figures.file_names))
    assert all((tmp_path / "plots" / name).is_file() for name in figures.file_names), saved
