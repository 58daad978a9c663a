"""Fixes of the conventions leads of review 54 (L2-L4, L8-L10, L12-L13): each test fails on the
code before its fix."""

from __future__ import annotations

import pytest

from trustlab.errors import InputError


@pytest.mark.parametrize(
    "call, argument, came",
    [
        (lambda f: f.average_weights("x"), "updates", "'x'"),
        (lambda f: f.average_weights(5), "updates", "5"),
        (lambda f: f.average_weights(["x"]), "updates[0]", "'x'"),
        (lambda f: f.average_weights([{"w": [1.0]}], keys="w"), "keys", "'w'"),
    ],
    ids=["string", "number", "string-update", "string-keys"],
)
def test_average_weights_refuses_what_is_not_a_sequence_of_mappings(call, argument, came):
    """L10: a string or a number as the updates raised TypeError ('string indices must be
    integers'); keys='w' was read as its characters."""
    from trustlab import federated

    with pytest.raises(InputError) as caught:
        call(federated)
    assert caught.value.argument == argument
    assert str(caught.value).startswith(f"{argument}: expected ")
    assert came in str(caught.value)


@pytest.mark.parametrize(
    "pieces, activations, argument",
    [
        (5, [1.0], "pieces"),
        ("ab", [1.0, 2.0], "pieces"),
        ([1], [1.0], "pieces[0]"),
        (["a"], ["x"], "activations"),
    ],
    ids=["number", "string", "number-piece", "text-activation"],
)
def test_highlight_refuses_pieces_that_are_not_strings(pieces, activations, argument):
    """L10: highlight(5, [1.0]) raised TypeError ("object of type 'int' has no len()")."""
    from trustlab.interpret import highlight

    with pytest.raises(InputError) as caught:
        highlight(pieces, activations)
    assert caught.value.argument == argument


def test_highlight_and_average_weights_still_take_what_they_took():
    import numpy as np

    from trustlab.federated import average_weights
    from trustlab.interpret import highlight

    assert highlight([], []) == ("", [])
    assert highlight(("a", "b"), np.array([0.0, 1.0])) == ("a<<b>>", [1])
    avg = average_weights(({"w": np.array([0.0])}, {"w": np.array([2.0])}), keys=("w",))
    assert avg["w"].tolist() == [1.0]


def _tiny_images(n: int = 4):
    import numpy as np

    return np.random.default_rng(0).integers(0, 256, (n, 9, 7, 3), dtype=np.uint8)


@pytest.mark.parametrize("name", ["WatermarkPredictor", "GlobalStatisticsBaseline"])
def test_watermark_learners_are_scikit_learn_estimators(name):
    """L2/L3: clone refused both ('does not seem to be a scikit-learn estimator') and neither
    had get_params; they also offer no metadata-routing setters (their inputs are images)."""
    from sklearn.base import clone

    from trustlab import watermark

    cls = getattr(watermark, name)
    params = {"max_epochs": 3} if name == "WatermarkPredictor" else {"alpha": 2.0}
    estimator = cls(**params)
    copy = clone(estimator)
    assert copy is not estimator and type(copy) is cls
    assert copy.get_params() == estimator.get_params()
    assert all(estimator.get_params()[key] == value for key, value in params.items())
    assert not hasattr(cls, "set_fit_request") and not hasattr(cls, "set_predict_request")


@pytest.mark.parametrize("name", ["WatermarkPredictor", "GlobalStatisticsBaseline"])
def test_watermark_learners_predicting_before_fit_raise_not_fitted(name):
    """L2: GlobalStatisticsBaseline().predict raised AttributeError ('no attribute model_')."""
    from sklearn.exceptions import NotFittedError

    from trustlab import watermark

    with pytest.raises(NotFittedError, match=f"this {name} is not fitted"):
        getattr(watermark, name)().predict(_tiny_images())


@pytest.mark.parametrize(
    "make, argument",
    [
        (lambda G, imgs: G().fit("x", [1.0]), "images"),
        (lambda G, imgs: G().fit(imgs[..., :2], [1.0] * 4), "images"),
        (lambda G, imgs: G().fit(list(imgs[:1]) + [imgs[1, :5]], [1.0, 2.0]), "images"),
        (lambda G, imgs: G().fit(imgs.astype(bool), [1.0] * 4), "images"),
        (lambda G, imgs: G().fit(imgs, [1.0, 2.0]), "scores"),
        (lambda G, imgs: G().fit(imgs, [1.0, 2.0, 3.0, float("nan")]), "scores"),
        (lambda G, imgs: G(alpha="x").fit(imgs, [1.0] * 4), "alpha"),
        (lambda G, imgs: G(alpha=-1.0).fit(imgs, [1.0] * 4), "alpha"),
        (lambda G, imgs: G().fit(imgs, [1.0, 2.0, 3.0, 4.0]).predict(imgs[0]), "images"),
    ],
    ids=[
        "text",
        "two-channels",
        "two-sizes",
        "bool",
        "short-scores",
        "nan-score",
        "text-alpha",
        "negative-alpha",
        "one-image-predict",
    ],
)
def test_global_statistics_baseline_checks_its_arguments(make, argument):
    """L2: fit('x', [1]) raised TypeError, 3 images with 2 scores sklearn's ValueError,
    alpha='x' a ValueError from float()."""
    from trustlab.watermark import GlobalStatisticsBaseline

    with pytest.raises(InputError) as caught:
        make(GlobalStatisticsBaseline, _tiny_images())
    assert caught.value.argument == argument


def _small_sae():
    import numpy as np

    from trustlab.interpret import SparseAutoencoder

    rng = np.random.default_rng(0)
    X = rng.normal(size=(64, 6))
    return SparseAutoencoder(n_latents=8, k=2, max_epochs=2, batch_size=32).fit(X)


def test_sae_fit_names_the_epochs_it_ran_epochs_run():
    """L9: SAEFit's `epochs` (a synonym of max_epochs) is `epochs_run`, in to_dict too."""
    import dataclasses

    from trustlab.interpret import SAEFit

    fields = {f.name for f in dataclasses.fields(SAEFit)}
    assert "epochs_run" in fields and "epochs" not in fields
    fit = _small_sae().fit_
    assert fit.epochs_run == 2 and fit.to_dict()["epochs_run"] == 2
    assert "epochs" not in fit.to_dict()
    assert SAEFit.from_dict(fit.to_dict(), fit.history) == fit


def test_an_sae_saved_with_the_old_epochs_key_still_loads(tmp_path):
    """A trustlab_sae.json written before the rename (fit: {"epochs": ...}) reads back."""
    import json

    from trustlab.interpret import load_sae

    sae = _small_sae()
    folder = sae.save(tmp_path / "sae")
    info_file = folder / "trustlab_sae.json"
    info = json.loads(info_file.read_text())
    info["fit"]["epochs"] = info["fit"].pop("epochs_run")
    info_file.write_text(json.dumps(info))
    back = load_sae(folder)
    assert back.fit_.epochs_run == 2 and back.fit_ == sae.fit_


def test_an_sae_latents_explanation_is_a_latent_explanation():
    """L4: trustlab.interpret.Explanation clashed with trustlab.explain.Explanation (FastPD)."""
    import trustlab.explain
    import trustlab.interpret
    from trustlab.interpret import LatentExplanation, template_explanation

    assert "Explanation" not in trustlab.interpret.__all__
    assert "LatentExplanation" in trustlab.interpret.__all__
    assert not hasattr(trustlab.interpret, "Explanation")
    assert trustlab.explain.Explanation is not LatentExplanation
    assert LatentExplanation.__module__ == "trustlab.interpret.sae.explain"
    assert callable(template_explanation)


@pytest.mark.parametrize(
    "value, expected",
    [
        ("x", "n_categories: expected an integer >= 1, got 'x'"),
        (2.5, "n_categories: expected an integer >= 1, got 2.5"),
        (0, "n_categories: expected an integer >= 1, got 0"),
        (16, "n_categories: expected an integer in [1, 15] (the set's categories), got 16"),
    ],
)
def test_synthetic_casebench_n_categories_is_a_count(value, expected):
    """L12: 'x' was "expected a number" and 2.5 was read as 2 categories."""
    from trustlab.safety import make_synthetic_casebench

    with pytest.raises(InputError) as caught:
        make_synthetic_casebench(n_categories=value)
    assert str(caught.value) == expected
    assert make_synthetic_casebench(n_categories=3).n_categories == 3


def test_context_power_names_the_option_p1_in_its_message(capsys):
    """L13: `--p1 0.5 --p2 0.5` said 'different from p1 = 0.5' (the library's name)."""
    from cli_helpers import one_line, run_main

    args = ["safety", "context", "power", "--p1", "0.5", "--p2", "0.5"]
    code, out, err = run_main(args, capsys)
    assert code == 2
    assert one_line(out + err).endswith(
        "--p2: expected a proportion different from --p1 (0.5), got 0.5"
    )
    # a --p1 outside [0, 1] is still refused as --p1's fault first
    code, out, err = run_main(["safety", "context", "power", "--p1", "2", "--p2", "2"], capsys)
    assert code == 2 and "--p1: expected a number in [0, 1], got 2.0" in one_line(out + err)
