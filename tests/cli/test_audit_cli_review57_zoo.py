"""``trustlab audit --zoo``: train only some default models (review 57); the library's
``run_audit(models=...)`` checks the names, the CLI's errors name ``--zoo``."""

import json

import numpy as np
import pandas as pd
import pytest

from cli_helpers import one_line
from cli_helpers import run_main as run


@pytest.fixture(scope="module")
def tiny_csv(tmp_path_factory):
    rng = np.random.default_rng(41)
    n = 60
    x = rng.normal(size=(n, 3))
    y = np.where(x[:, 0] + rng.normal(size=n) > 0, "yes", "no")
    frame = pd.DataFrame({"a": x[:, 0], "b": x[:, 1], "c": x[:, 2], "y": y, "g": ["p", "q"] * 30})
    path = tmp_path_factory.mktemp("zoo") / "tiny.csv"
    frame.assign(yhat=y).to_csv(path, index=False)
    return path


def _args(tiny_csv, out):
    return ["audit", "--data", tiny_csv, "--label", "y", "--group", "g", "--exclude", "yhat",
            "--section", "overview", "--out", out]  # fmt: skip


def test_only_the_models_asked_are_trained_saved_and_reported_in_order(tiny_csv, tmp_path, capsys):
    asked = ["gradient_boosting", "logistic_regression"]
    code, out, _ = run([*_args(tiny_csv, tmp_path), "--zoo", ",".join(asked), "--json"], capsys)
    assert code == 0
    assert list(json.loads(out)["model_paths"]) == asked
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == sorted(
        f"{name}.skops" for name in asked
    )
    columns = pd.read_csv(tmp_path / "predictions.csv").columns
    assert [c for c in columns if ":" not in c] == ["row", "y", "g", *asked]
    meta = json.loads((tmp_path / "report.json").read_text())["meta"]
    assert meta["models"] == meta["models_asked"] == asked


def test_a_comma_list_and_repeated_options_ask_the_same(tiny_csv, tmp_path, capsys, monkeypatch):
    import trustlab.audit

    asked = []

    def fake_run_audit(*args, models=None, **kwargs):
        asked.append(models)
        raise trustlab.errors.InputError("stop here", argument=None)

    monkeypatch.setattr(trustlab.audit, "run_audit", fake_run_audit)
    for form in (["--zoo", "random_forest, logistic_regression"],
                 ["--zoo", "random_forest", "--zoo", "logistic_regression"]):  # fmt: skip
        code, _, err = run([*_args(tiny_csv, tmp_path), *form], capsys)
        assert (code, one_line(err)) == (2, "trustlab: error: stop here")
    assert asked == [["random_forest", "logistic_regression"]] * 2


def test_an_unknown_model_is_one_line_naming_the_option_and_the_names(tiny_csv, tmp_path, capsys):
    from trustlab.audit.models import ZOO_NAMES

    code, _, err = run([*_args(tiny_csv, tmp_path), "--zoo", "random_forest,forest"], capsys)
    assert code == 2
    line = one_line(err)
    assert line.startswith("trustlab: error: --zoo: expected names among ")
    assert all(name in line for name in ZOO_NAMES) and line.endswith("got 'forest'")
    assert list(tmp_path.iterdir()) == []  # refused before anything is written


def test_zoo_with_pred_is_refused_naming_the_option(tiny_csv, tmp_path, capsys):
    args = ["audit", "--data", tiny_csv, "--label", "y", "--group", "g", "--pred", "yhat"]
    code, _, err = run([*args, "--zoo", "random_forest", "--out", tmp_path], capsys)
    assert code == 2
    assert one_line(err).startswith("trustlab: error: --zoo: expected no default models with a ")
    assert list(tmp_path.iterdir()) == []
