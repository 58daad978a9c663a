"""ANOVA-TPNN, third review: a feature name that makes two component names alike, --order named
in the CLI's words, a warning (and an audit note) for categorical levels not seen in training, and
whole-number levels matched whatever their text ("1", 1.0, "1.0")."""

import warnings

import numpy as np
import pandas as pd
import pytest
from test_anova_tpnn_audit import synthetic_context

from cli_helpers import one_line
from trustlab.audit.sections import anova_tpnn as section
from trustlab.cli.main import main
from trustlab.errors import InputError
from trustlab.explain.anova_tpnn import ANOVATPNN

pytest.importorskip("torch")


def _table(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.uniform(-1, 1, n), "c": rng.choice(["u", "v"], n)})
    y = X["a"] + (X["c"] == "u") + 0.1 * rng.normal(size=n)
    return X, y


def test_a_feature_named_as_a_pair_is_refused_before_training():
    """Features a, b and "a & b": the main effect of "a & b" and the pair of a and b had one
    name, and only the main effect could be reached by it."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(-1, 1, (60, 3)), columns=["a", "b", "a & b"])
    y = X["a"] + X["b"]
    calls = []
    with pytest.raises(InputError, match="'a & b' for both") as exc:
        ANOVATPNN(max_epochs=2).fit(X, y, progress=lambda *args: calls.append(args))
    assert exc.value.argument == "X" and "rename the column" in str(exc.value)
    assert calls == []  # refused before training starts
    # without pairs the names are distinct and the fit goes on
    model = ANOVATPNN(order=1, max_epochs=2, random_state=0).fit(X, y)
    assert model.component_names_ == ["a", "b", "a & b"]


def test_a_level_unseen_in_training_warns_at_predict():
    X, y = _table()
    model = ANOVATPNN(max_epochs=3, random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.predict(X)  # the training levels: no warning
    new = X.head(4).copy()
    new.loc[new.index[:2], "c"] = "w"
    with pytest.warns(
        UserWarning, match=r"feature 'c' has 2 value\(s\) not seen in training \('w'\)"
    ):
        parts = model.components(new)
    assert (parts["c"][:2] == 0).all()  # as documented: an unseen level contributes 0


@pytest.mark.parametrize("fit_values", [[1.0, 2.0, 3.0], [1, 2, 3]])
@pytest.mark.parametrize("texts", [["1", "2", "3"], ["1.0", "2.0", "3.0"]])
def test_whole_number_levels_are_matched_whatever_their_text(fit_values, texts):
    """A float level 1.0 was matched by the text "1.0" only (str(1.0)), an integer level 1 by
    "1" only: a file whose column is text read them as unseen levels, component 0."""
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 3, 90)
    X = pd.DataFrame({"a": rng.uniform(-1, 1, 90), "c": np.asarray(fit_values)[codes]})
    y = X["a"] + (codes == 0) + 0.1 * rng.normal(size=90)
    model = ANOVATPNN(max_epochs=3, random_state=0, categorical_features=["c"]).fit(X, y)
    as_text = X.assign(c=np.asarray(texts, dtype=object)[codes])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every text is a known level
        np.testing.assert_array_equal(model.components(as_text).values, model.components(X).values)


def test_cli_names_order_as_the_option(tmp_path, capsys):
    X, y = _table(80)
    X.assign(b=X["a"] ** 2, y=y).to_csv(tmp_path / "t.csv", index=False)
    base = ["explain", "anova-tpnn", "fit", "--data", str(tmp_path / "t.csv"), "--label", "y"]
    for extra, text in (
        (["--order", "1", "--interactions", "a:b"], "terms of 2 to --order 1 distinct features"),
        (["--interactions", "a:a"], "terms of 2 to --order 2 distinct features, got 'a & a'"),
    ):
        with pytest.raises(SystemExit) as exc:
            main([*base, *extra])
        line = one_line(capsys.readouterr().err)
        assert exc.value.code == 2 and text in line and "order=" not in line, line


def test_audit_notes_test_rows_with_levels_unseen_in_training():
    X, y = _table(160, seed=2)
    labels = np.where(y > y.median(), "q", "p")
    X_test = X.iloc[120:].copy()
    X_test.loc[X_test.index[:3], "c"] = "new"
    ctx = synthetic_context(X.iloc[:120], X_test, labels[:120], labels[120:])
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # said in the report, not on stderr
        result = section.build(ctx)
    assert any(
        "'c' has 3 value(s) not seen in training ('new')" in note for note in result.data["notes"]
    ), result.data["notes"]


def test_a_float_class_is_named_by_its_whole_number_text():
    """Labels read as floats (0.0, 1.0, 2.0): --target 1 was refused ('expected one of the
    classes [0.0, 1.0, 2.0], got '1''), since str(1.0) is "1.0"."""
    rng = np.random.default_rng(3)
    X = rng.uniform(0, 1, (90, 2))
    y = np.select([X[:, 0] < 0.3, X[:, 0] < 0.6], [0.0, 1.0], 2.0)
    model = ANOVATPNN(max_epochs=2, random_state=0).fit(X, y)
    grid = model.component_figures(["x0"], target="1").grids[0]
    assert grid._class_index("1") == grid._class_index(1.0) == 1
    assert grid._class_index("2.0") == 2
    with pytest.raises(InputError, match="target"):
        grid._class_index("1.5")


def test_cli_reaches_a_column_whose_name_holds_a_colon(tmp_path, capsys):
    """A column "t:x": plot --component "t:x" was split into t and x and refused, though the
    error listed 't:x' among the components; fit --interactions could not name its pairs."""
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"t:x": rng.uniform(0, 1, 70), "b": rng.uniform(0, 1, 70)})
    frame["y"] = frame["t:x"] + frame["b"] ** 2
    frame.to_csv(tmp_path / "t.csv", index=False)
    fit = ["explain", "anova-tpnn", "fit", "--data", str(tmp_path / "t.csv"), "--label", "y"]
    fit += ["--max-epochs", "2", "--top", "0", "--order", "1", "--interactions", "t:x & b"]
    with pytest.raises(SystemExit) as exc:  # the pair is read as t:x and b
        main(fit)
    assert exc.value.code == 2 and "got 't:x & b'; raise --order" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main([*fit[:-4], "--out", str(tmp_path / "m")])
    assert exc.value.code == 0
    capsys.readouterr()
    for n, component in enumerate(["t:x", "t:x & b", "b:t:x"]):
        out = tmp_path / f"p{n}"
        base = ["explain", "anova-tpnn", "plot", "--model", str(tmp_path / "m")]
        with pytest.raises(SystemExit) as exc:
            main([*base, "--component", component, "--out", str(out), "--json"])
        err = capsys.readouterr().err
        if component == "b:t:x":  # b, t and x: not a component, and said so
            assert exc.value.code == 2 and "'t:x & b'" in one_line(err)
        else:
            assert exc.value.code == 0, err
            assert len(list(out.glob("component_*.png"))) == 1


def test_audit_calls_a_column_named_with_an_ampersand_a_main_effect():
    """The figure caption said "interaction" for any name holding " & " (a column "R & D")."""
    from trustlab.report import Figure

    rng = np.random.default_rng(5)
    X = pd.DataFrame({"R & D": rng.uniform(-1, 1, 120), "b": rng.uniform(-1, 1, 120)})
    labels = np.where(X["R & D"] + 0.2 * rng.normal(size=120) > 0, "q", "p")
    ctx = synthetic_context(X.iloc[:80], X.iloc[80:], labels[:80], labels[80:])
    captions = [b.caption for b in section.build(ctx).blocks if isinstance(b, Figure)]
    assert "ANOVA-TPNN main effect R & D" in captions, captions
    assert "ANOVA-TPNN interaction R & D & b" in captions, captions


def test_a_dataframe_given_to_a_model_fitted_on_an_array_warns():
    """Columns are taken by position: X[["b", "a"]] was predicted as (a, b) without a word
    (scikit-learn warns 'X has feature names, but ... was fitted without feature names')."""
    rng = np.random.default_rng(6)
    X = rng.uniform(-1, 1, (80, 2))
    model = ANOVATPNN(max_epochs=2, random_state=0).fit(X, X[:, 0] - X[:, 1])
    with pytest.warns(UserWarning, match="fitted without feature names"):
        model.predict(pd.DataFrame(X[:, ::-1], columns=["b", "a"]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # its own names, or an array: nothing to say
        model.predict(pd.DataFrame(X, columns=["x0", "x1"]))
        model.predict(X)


def test_a_feature_called_r_and_d_is_named_in_pairs():
    """interactions=["R&D & b"] and component "b & R&D" were split at every "&" (R, D, b)."""
    rng = np.random.default_rng(7)
    X = pd.DataFrame(rng.uniform(-1, 1, (70, 3)), columns=["R&D", "b", "c"])
    model = ANOVATPNN(interactions=["R&D & b", "b&c"], max_epochs=2, random_state=0)
    model.fit(X, X["R&D"] * X["b"])
    assert model.component_names_ == ["R&D", "b", "c", "R&D & b", "b & c"]
    assert model.component_grid("b & R&D").name == "R&D & b"
    assert model.component_grid("c&b").name == "b & c"


def test_a_damaged_model_file_is_one_line_without_torch_advice(tmp_path, capsys):
    """A model.pt that is not saved tensors gave torch's many-line message, which advises
    weights_only=False (running pickled code); an unknown component was shown as a list."""
    X, y = _table(70)
    model = ANOVATPNN(max_epochs=2, random_state=0).fit(X, y)
    folder = model.save(tmp_path / "m")
    with pytest.raises(InputError, match="got 'nope'"):
        model.component_grid("nope")
    (folder / "model.pt").write_bytes(b"not tensors")
    X.to_csv(tmp_path / "x.csv", index=False)
    with pytest.raises(SystemExit) as exc:
        main(
            [
                "explain",
                "anova-tpnn",
                "predict",
                "--model",
                str(folder),
                "--data",
                str(tmp_path / "x.csv"),
            ]
        )
    line = one_line(capsys.readouterr().err)
    assert exc.value.code == 2 and "model.pt as saved tensors" in line, line
    assert "weights_only" not in line


@pytest.mark.parametrize("damage", ["json key", "tensor"])
def test_an_incomplete_model_folder_is_an_input_error(damage, tmp_path):
    """model.json without 'terms' or model.pt without 'intercept' raised a raw KeyError
    (the CLI's 'unexpected failure', exit 1)."""
    import json

    import torch

    X, y = _table(70)
    folder = ANOVATPNN(max_epochs=2, random_state=0).fit(X, y).save(tmp_path / "m")
    if damage == "json key":
        meta = json.loads((folder / "model.json").read_text())
        del meta["terms"]
        (folder / "model.json").write_text(json.dumps(meta))
    else:
        tensors = torch.load(folder / "model.pt", weights_only=True)
        del tensors["intercept"]
        torch.save(tensors, folder / "model.pt")
    with pytest.raises(InputError, match="not a complete trustlab.ANOVATPNN model") as exc:
        ANOVATPNN.load(folder)
    assert exc.value.argument == "model"
