"""Third review of SafetyPolytope.save/load: metadata that cannot be stored is refused before
anything is written (a refusal after the arrays were written left the new polytope's arrays
beside the old one's settings and metadata, loaded silently as a mixture), metadata that is not
a dict is refused (it was saved and then made load() raise a raw ValueError), and a stored file
whose metadata is not an object is a ResourceError naming the file."""

import json

import numpy as np
import pytest

from trustlab.errors import InputError, ResourceError
from trustlab.safety import SafetyPolytope


def _old_and_new():
    old = SafetyPolytope.from_parameters([[1.0, 0.0]], [1.0], layer=2)
    new = SafetyPolytope.from_parameters([[0.0, 1.0], [1.0, 1.0]], [5.0, 5.0], layer=7)
    return old, new


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ({"model": "new", "bad": object()}, "metadata['bad']: expected JSON-safe values"),
        (["new"], "metadata: expected a dict of JSON-safe values, or None, got list"),
        ("new", "metadata: expected a dict of JSON-safe values, or None, got 'new'"),
    ],
)
def test_a_refused_save_leaves_the_folder_as_it_was(tmp_path, metadata, message):
    old, new = _old_and_new()
    old.save(tmp_path, metadata={"model": "old"})
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("]", r"\]")):
        new.save(tmp_path, metadata=metadata)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    loaded = SafetyPolytope.load(tmp_path)
    assert loaded.layer == 2 and loaded.metadata_ == {"model": "old"}
    assert np.array_equal(loaded.normals_, old.normals_)


def test_a_refused_save_into_a_new_folder_writes_nothing(tmp_path):
    _, new = _old_and_new()
    with pytest.raises(InputError):
        new.save(tmp_path / "sap", metadata=["new"])
    assert not (tmp_path / "sap").exists()


def test_stored_metadata_that_is_not_an_object_is_a_resource_error(tmp_path):
    old, _ = _old_and_new()
    old.save(tmp_path)
    info = json.loads((tmp_path / "polytope.json").read_text())
    info["metadata"] = ["x"]
    (tmp_path / "polytope.json").write_text(json.dumps(info))
    with pytest.raises(ResourceError, match="polytope.json: metadata is not a JSON object"):
        SafetyPolytope.load(tmp_path)
