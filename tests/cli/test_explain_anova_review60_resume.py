"""``trustlab explain anova-tpnn fit --out DIR`` resumes an interrupted fit (review 60): a crash
or Ctrl-C lost every finished epoch of fits that run up to about two hours. The state is kept in
``DIR/_state`` after every epoch (removed once the model is saved), a rerun says it resumed and
ends with the model an uninterrupted run gives; a state of other settings is one ``--out`` line
(exit 2) unless ``--overwrite``, which discards it."""

import numpy as np
import pandas as pd
import pytest

from cli_helpers import InterruptAt, one_line
from trustlab.cli import explain_anova
from trustlab.explain.anova_tpnn import ANOVATPNN

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    rng = np.random.default_rng(60)
    frame = pd.DataFrame({"a": rng.uniform(-1, 1, 40), "b": rng.uniform(-1, 1, 40)})
    frame["y"] = np.sin(3 * frame["a"]) + frame["a"] * frame["b"]
    path = tmp_path_factory.mktemp("data") / "t.csv"
    frame.to_csv(path, index=False)
    return path, frame[["a", "b"]]


def _fit(path, out, *extra):
    return ["explain", "anova-tpnn", "fit", "--data", path, "--label", "y", "--out", out,
            "--max-epochs", "4", "--n-basis", "3", "--top", "0", "--n-jobs", "1", *extra]  # fmt: skip


def _interrupted(run, monkeypatch, args, folder):
    with monkeypatch.context() as patch:
        patch.setattr(explain_anova, "progress", InterruptAt(2))
        assert run(*args)[0] == 130
    assert (folder / "_state" / "state.pt").is_file() and not (folder / "model.pt").exists()


def test_an_interrupted_fit_resumes_to_the_same_model(run, table, tmp_path, monkeypatch):
    path, X = table
    whole = tmp_path / "whole"
    assert run(*_fit(path, whole))[0] == 0
    folder = tmp_path / "m"
    _interrupted(run, monkeypatch, _fit(path, folder), folder)
    code, _, err = run(*_fit(path, folder, "--json"))
    assert code == 0, err
    assert f"resumed the interrupted run in {folder / '_state'} after epoch 2" in err
    assert not (folder / "_state").exists()
    resumed, fresh = ANOVATPNN.load(folder), ANOVATPNN.load(whole)
    np.testing.assert_array_equal(resumed.predict(X), fresh.predict(X))
    assert resumed.history_ == fresh.history_


def test_a_state_of_other_settings_is_refused_unless_overwrite(run, table, tmp_path, monkeypatch):
    path, _ = table
    folder = tmp_path / "m"
    _interrupted(run, monkeypatch, _fit(path, folder), folder)
    code, _, err = run(*_fit(path, folder, "--seed", "1"))
    line = one_line(err)  # refused before the plan of the fit is announced
    assert (
        code == 2 and line.startswith("trustlab: error: --out: ") and "checkpoint_dir" not in line
    )
    assert "rerun with --overwrite to start afresh" in line and "resum" not in err
    code, _, err = run(*_fit(path, folder, "--seed", "1", "--overwrite"))
    assert code == 0, err
    assert "discarding the interrupted run" in err and "resum" not in err
    assert (folder / "model.pt").is_file() and not (folder / "_state").exists()
