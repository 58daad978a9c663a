"""Review 57: robustness says n_classes / n_features (as explain and federated do); the num_
names keep working for one release, and model folders saved with the old keys still load."""

import json

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.robustness import (
    SmoothedClassifier,
    check_cost_matrix,
    digits_model,
    load_base_model,
    make_cost_matrix,
    save_base_model,
)


def halfspace(batch):
    return (batch[:, 0] > 0).astype(int)


def test_smoothed_classifier_takes_n_classes_and_the_old_name_warns():
    new = SmoothedClassifier(halfspace, 0.5, n_classes=2)
    with pytest.warns(FutureWarning, match="num_classes is deprecated; use n_classes"):
        old = SmoothedClassifier(halfspace, 0.5, num_classes=2)
    assert repr(old) == repr(new) and new.n_classes == 2
    with pytest.warns(FutureWarning, match="num_classes is deprecated"):
        assert old.num_classes == 2
    x = np.array([1.0, 0.0])
    assert old.predict(x, n=200, alpha=0.01, random_state=3) == new.predict(
        x, n=200, alpha=0.01, random_state=3
    )
    with pytest.raises(InputError, match="^num_classes: expected n_classes only"):
        SmoothedClassifier(halfspace, 0.5, n_classes=2, num_classes=2)


def test_cost_matrices_take_n_classes_and_the_old_name_warns():
    new = make_cost_matrix(n_classes=3, harmful=[(0, 2)])
    with pytest.warns(FutureWarning, match="num_classes is deprecated; use n_classes"):
        old = make_cost_matrix(num_classes=3, harmful=[(0, 2)])
    assert old.tolist() == new.tolist() == make_cost_matrix(3, [(0, 2)]).tolist()
    with pytest.warns(FutureWarning, match="num_classes is deprecated; use n_classes"):
        assert check_cost_matrix(None, num_classes=3).tolist() == (1 - np.eye(3)).tolist()
    assert check_cost_matrix(new, n_classes=3).tolist() == new.tolist()
    with pytest.raises(InputError, match="^num_classes: expected n_classes only"):
        make_cost_matrix(n_classes=3, num_classes=3, harmful=[(0, 2)])
    with pytest.raises(InputError, match="^num_classes: expected n_classes only"):
        check_cost_matrix(None, n_classes=3, num_classes=3)


def test_digits_model_and_its_folder_say_n_and_old_folders_still_load(tmp_path):
    torch = pytest.importorskip("torch")
    model = digits_model(n_features=4, n_classes=3, hidden=2, random_state=1)
    assert model.trustlab_spec == {"arch": "mlp", "n_features": 4, "n_classes": 3, "hidden": 2}
    with pytest.warns(FutureWarning, match="num_features is deprecated; use n_features"):
        old = digits_model(num_features=4, n_classes=3, hidden=2, random_state=1)
    with pytest.warns(FutureWarning, match="num_classes is deprecated; use n_classes"):
        digits_model(n_features=4, num_classes=3, hidden=2)
    assert old.trustlab_spec == model.trustlab_spec
    with pytest.raises(InputError, match="^num_features: expected n_features only"):
        digits_model(n_features=4, num_features=4)

    folder = save_base_model(model, tmp_path / "model", sigma=0.25)
    saved = json.loads((folder / "model.json").read_text())
    assert {"n_features", "n_classes"} <= set(saved) and "num_classes" not in saved
    # A folder written before review 57: the same description under the old keys.
    saved["num_features"], saved["num_classes"] = saved.pop("n_features"), saved.pop("n_classes")
    (folder / "model.json").write_text(json.dumps(saved))
    loaded = load_base_model(folder)
    assert loaded.trustlab_description["n_classes"] == 3
    assert "num_classes" not in loaded.trustlab_description
    x = torch.linspace(-1, 1, 8).reshape(2, 4)
    with torch.no_grad():
        assert torch.equal(loaded(x), model(x))
    again = json.loads((save_base_model(loaded, tmp_path / "again") / "model.json").read_text())
    assert again == {**saved_new(saved), "sigma": 0.25}


def saved_new(saved):
    out = dict(saved)
    out["n_features"], out["n_classes"] = out.pop("num_features"), out.pop("num_classes")
    return out
