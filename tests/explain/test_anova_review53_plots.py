"""ANOVA-TPNN review 53: a three-way component is refused for plotting before anything is saved,
and the components fit draws are chosen by their features, not by the " & " in their names (a
column may be called "R & D")."""

import json

import numpy as np
import pandas as pd
import pytest
import torch

from trustlab.cli.main import main
from trustlab.errors import InputError
from trustlab.explain.anova_tpnn import ANOVATPNN


def _fit(columns, **params):
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    rng = np.random.default_rng(53)
    X = pd.DataFrame(rng.uniform(-1, 1, size=(80, len(columns))), columns=columns)
    y = X.iloc[:, 0] * X.iloc[:, 1] + 0.1 * rng.normal(size=80)
    model = ANOVATPNN(max_epochs=1, random_state=0, n_jobs=1, **params).fit(X, y)
    torch.set_num_threads(previous)
    return X, y, model


@pytest.fixture(scope="module")
def order_three():
    return _fit(["a", "b", "c"], order=3)


def test_component_figures_refuse_a_three_way_component_before_drawing(order_three):
    # it was accepted and failed only when drawn
    _, _, model = order_three
    with pytest.raises(
        InputError, match="expected a main effect or a pair to plot, got 'a & b & c'"
    ):
        model.component_figures(["a", "a & b & c"])


def test_plot_of_a_three_way_component_saves_nothing(order_three, tmp_path, capsys):
    # plot --component a:b:c exited 2 but left result.json naming a PNG never drawn
    _, _, model = order_three
    folder = model.save(tmp_path / "model")
    out = tmp_path / "plots"
    args = ["explain", "anova-tpnn", "plot", "--model", str(folder), "--component", "a:b:c"]
    with pytest.raises(SystemExit) as exc:
        main([*args, "--out", str(out)])
    err = capsys.readouterr().err
    assert exc.value.code == 2, err
    assert "--component: expected a main effect or a pair to plot, got 'a & b & c'" in err
    assert not out.exists()


def test_the_pairs_of_a_column_named_with_an_ampersand_are_drawn():
    # summarize (fit --out) counted " & " in names: 'R & D & b', a pair, was taken for a triple
    # and never drawn, though it was the strongest component
    X, y, model = _fit(["R & D", "b", "c"])
    summary = model.summarize(X, y, top=6)
    assert sorted(summary.plotted) == sorted(model.component_names_)
    assert "component_R__D__b.png" in summary.file_names


@pytest.mark.parametrize("term", ["R & D & b", "b & R & D", ("R & D", "b")])
def test_a_pair_of_a_column_named_with_an_ampersand_can_be_named(term):
    # interactions=['R & D & b'] (the component's own name) was split at every ' & ' and refused
    # ("got 'R'"); so was the component 'b & R & D'
    _, _, model = _fit(["R & D", "b", "c"], interactions=[term])
    assert model.component_names_ == ["R & D", "b", "c", "R & D & b"]
    assert model.component_grid("b & R & D").name == "R & D & b"


@pytest.mark.parametrize("term", ["R & D:b", "b:R & D", "R & D & b"])
def test_fit_interactions_names_a_pair_of_a_column_named_with_an_ampersand(term, tmp_path, capsys):
    # --interactions "R & D:b" was split at ' & ' and refused: "expected a column of the data,
    # got 'R'"; a column named "R & D" could not be named in --interactions at all
    X, y, _ = _fit(["R & D", "b", "c"])
    data = tmp_path / "rd.csv"
    X.assign(y=y).to_csv(data, index=False)
    args = ["explain", "anova-tpnn", "fit", "--data", str(data), "--label", "y"]
    with pytest.raises(SystemExit) as exc:
        main([*args, "--interactions", term, "--max-epochs", "1", "--json", "--n-jobs", "1"])
    out, err = capsys.readouterr()
    assert exc.value.code == 0, err
    names = [c["name"] for c in json.loads(out)["importance"]["components"]]
    assert sorted(names) == ["R & D", "R & D & b", "b", "c"]
