"""load_activation_map checks the saved weights against the recorded widths (review 61): a map
whose JSON widths or safetensors arrays disagreed loaded, then failed at transform with a bare
numpy ValueError (matmul), and weights holding a NaN loaded and mapped every row to NaN."""

from __future__ import annotations

import json

import numpy as np
import pytest

from trustlab.errors import ResourceError
from trustlab.safety.transfer import ActivationMap, load_activation_map

pytest.importorskip("safetensors")
from safetensors.numpy import load_file, save_file  # noqa: E402

WEIGHTS, PARAMS = "activation_map.safetensors", "activation_map.json"


def _saved(tmp_path, kind):
    rng = np.random.default_rng(0)
    source = rng.normal(size=(60, 6))
    target = source @ rng.normal(size=(6, 4))
    ActivationMap(kind=kind, max_epochs=1).fit(source, target).save(tmp_path)
    return source


@pytest.mark.parametrize("kind", ["affine", "autoencoder"])
def test_a_recorded_width_the_weights_do_not_have_is_refused(tmp_path, kind):
    _saved(tmp_path, kind)
    info = json.loads((tmp_path / PARAMS).read_text())
    info["source_width"] = 5
    (tmp_path / PARAMS).write_text(json.dumps(info))
    with pytest.raises(ResourceError, match=r"has shape .*expected floats of shape"):
        load_activation_map(tmp_path)


@pytest.mark.parametrize("kind", ["affine", "autoencoder"])
def test_weights_of_the_wrong_shape_or_with_a_nan_are_refused(tmp_path, kind):
    source = _saved(tmp_path, kind)
    good = load_file(str(tmp_path / WEIGHTS))
    assert np.isfinite(load_activation_map(tmp_path).transform(source[:3])).all()  # as saved
    first = next(iter(good))
    short = dict(good, **{first: np.ascontiguousarray(good[first][..., :-1])})
    save_file(short, str(tmp_path / WEIGHTS))
    with pytest.raises(ResourceError, match=f"{first} has shape"):
        load_activation_map(tmp_path)
    broken = {k: v.copy() for k, v in good.items()}
    broken[first].flat[0] = np.nan
    save_file(broken, str(tmp_path / WEIGHTS))
    with pytest.raises(ResourceError, match=f"{first} holds NaN"):
        load_activation_map(tmp_path)
