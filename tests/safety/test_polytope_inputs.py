"""Bad input to SafetyPolytope fails early with a clear error; saving uses no pickle."""

import json

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from trustlab.errors import InputError, ResourceError
from trustlab.safety import SafetyPolytope, fit_on_prompts


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(60, 5)), rng.normal(size=(60, 5)) + 3.0])
    y = np.r_[np.zeros(60), np.ones(60)]
    categories = np.array(["benign"] * 60 + ["harm_a"] * 30 + ["harm_b"] * 30)
    polytope = SafetyPolytope(n_facets=3, max_epochs=5, layer=4, random_state=0)
    return polytope.fit(X, y, categories), X, y


def test_activations_of_the_wrong_width_are_rejected(small):
    polytope, X, _ = small
    with pytest.raises(InputError, match=r"acts: expected activations of width 5.*\(4, 7\)"):
        polytope.violations(np.zeros((4, 7)))
    with pytest.raises(InputError, match="width 5"):
        polytope.project(np.zeros(6))


def test_use_before_fit_raises_not_fitted():
    polytope = SafetyPolytope()
    for method in (polytope.violations, polytope.is_unsafe, polytope.project):
        with pytest.raises(NotFittedError):
            method(np.zeros((2, 3)))
    with pytest.raises(NotFittedError):
        polytope.facet_report()


def test_training_data_without_an_unsafe_example_is_rejected(small):
    _, X, _ = small
    with pytest.raises(InputError, match="unsafe: expected at least one unsafe example"):
        SafetyPolytope().fit(X, np.zeros(len(X)))
    with pytest.raises(InputError, match="unsafe: expected at least one safe example"):
        SafetyPolytope().fit(X, np.ones(len(X)))


def test_labels_must_be_binary_and_aligned(small):
    _, X, y = small
    with pytest.raises(InputError, match="unsafe: expected 0/1 or boolean labels"):
        SafetyPolytope().fit(X, y * 2)
    with pytest.raises(InputError, match="unsafe: expected 120 labels"):
        SafetyPolytope().fit(X, y[:-1])
    with pytest.raises(InputError, match="categories: expected 120 categories"):
        SafetyPolytope().fit(X, y, ["a"] * 3)


def test_non_finite_activations_are_rejected(small):
    _, X, y = small
    bad = X.copy()
    bad[3, 2] = np.nan
    with pytest.raises(InputError, match="acts: expected finite values"):
        SafetyPolytope().fit(bad, y)


@pytest.mark.parametrize(
    ("param", "value", "message"),
    [
        ("n_facets", 0, "n_facets: expected an integer >= 1"),
        ("encoder", "mlp", "encoder: expected one of 'linear', 'concept'"),
        ("margin", 0.0, "margin: expected a number in"),
        ("init", "zeros", "init: expected one of 'data', 'random'"),
        ("layer", -1, "layer: expected an integer >= 0"),
        ("learning_rate", 0.0, "learning_rate: expected a number in"),
        ("facet_l1", -1.0, "facet_l1: expected a number in"),
        ("reassign", "yes", "reassign: expected True or False"),
        ("random_state", -1, "random_state: expected"),
    ],
)
def test_bad_settings_name_the_parameter(small, param, value, message):
    _, X, y = small
    with pytest.raises(InputError, match=message):
        SafetyPolytope(**{param: value}).fit(X, y)


def test_fitting_on_prompts_needs_the_layer_before_reading_any_state():
    # neither the model nor the prompts are touched: the settings are checked first
    with pytest.raises(InputError, match="layer: expected the decoder layer to read"):
        fit_on_prompts(SafetyPolytope(), model=None, prompts=None)
    with pytest.raises(InputError, match="n_facets: expected an integer >= 1"):
        fit_on_prompts(SafetyPolytope(n_facets=0, layer=3), model=None, prompts=None)


def test_bad_projection_options_are_rejected(small):
    polytope, X, _ = small
    with pytest.raises(InputError, match="norm: expected one of 'l2', 'l1'"):
        polytope.project(X[:2], norm="linf")
    with pytest.raises(InputError, match="margin: expected a number in"):
        polytope.project(X[:2], margin=-1.0)


def test_facet_report_needs_both_acts_and_categories(small):
    polytope, X, _ = small
    with pytest.raises(InputError, match="both or neither"):
        polytope.facet_report(X)
    no_categories = SafetyPolytope(n_facets=2, max_epochs=1, random_state=0).fit(X, small[2])
    with pytest.raises(InputError, match="categories: expected categories given to fit"):
        no_categories.facet_report()


def test_save_and_load_round_trip_without_pickle(small, tmp_path):
    polytope, X, _ = small
    polytope.save(tmp_path / "sap", metadata={"model": "toy", "layer": 4})
    with np.load(tmp_path / "sap" / "polytope.npz", allow_pickle=False) as arrays:
        assert all(arrays[name].dtype != object for name in arrays.files)
    loaded = SafetyPolytope.load(tmp_path / "sap")
    assert np.array_equal(loaded.violations(X), polytope.violations(X))
    assert loaded.layer == 4 and loaded.n_facets == 3
    assert loaded.metadata_ == {"model": "toy", "layer": 4}
    assert loaded.facet_report().categories == ("benign", "harm_a", "harm_b")
    info = json.loads((tmp_path / "sap" / "polytope.json").read_text())
    assert info["params"]["random_state"] == 0


def test_loading_a_folder_without_a_polytope_fails_clearly(tmp_path):
    with pytest.raises(ResourceError, match="polytope.json and polytope.npz"):
        SafetyPolytope.load(tmp_path)


def test_an_encoder_bias_without_its_weight_is_refused():
    """It was dropped, and a linear polytope came back without a message."""
    with pytest.raises(InputError, match=r"^encoder_bias: expected an encoder_weight with it"):
        SafetyPolytope.from_parameters([[1.0, 0.0]], [1.0], encoder_bias=[5.0])


def _saved(folder, concept=False):
    weight = {"encoder_weight": [[1.0, 0.0], [0.0, 1.0]]} if concept else {}
    box = SafetyPolytope.from_parameters([[1.0, 0.0], [0.0, 1.0]], [1.0, 1.0], **weight)
    return box.save(folder)


@pytest.mark.parametrize(
    ("spoil", "message"),
    [
        (lambda f: (f / "polytope.json").write_text("{not json"), r"polytope\.json: could not"),
        (lambda f: (f / "polytope.json").write_text("[1]"), r"polytope\.json: expected"),
        (
            lambda f: (f / "polytope.json").write_text('{"format_version": 1}'),
            r"polytope\.json: incomplete, it lacks params, n_features_in",
        ),
        (
            lambda f: np.savez(f / "polytope.npz", normals=np.ones((2, 2))),
            r"polytope\.npz: incomplete, it lacks the array\(s\) offsets, mean, scale",
        ),
        (lambda f: (f / "polytope.npz").write_bytes(b"PK\x03\x04"), r"polytope\.npz: could not"),
    ],
)
def test_a_corrupt_or_partial_polytope_folder_names_the_file(tmp_path, spoil, message):
    """A raw JSONDecodeError or KeyError before."""
    folder = _saved(tmp_path / "p")
    spoil(folder)
    with pytest.raises(ResourceError, match=message):
        SafetyPolytope.load(folder)


def test_a_concept_polytope_without_its_encoder_arrays_is_refused(tmp_path):
    folder = _saved(tmp_path / "p", concept=True)
    assert SafetyPolytope.load(folder).encoder == "concept"
    with np.load(folder / "polytope.npz") as data:
        kept = {k: data[k] for k in data.files if k != "encoder_bias"}
    np.savez(folder / "polytope.npz", **kept)
    with pytest.raises(ResourceError, match=r"polytope\.npz: .*lacks the array\(s\) encoder_bias"):
        SafetyPolytope.load(folder)
