"""load_latent_cache on a damaged or partial folder, or no folder path (review 64).

It raised the reader's own error (JSONDecodeError, KeyError, BadZipFile, EOFError,
AttributeError, TypeError) where load_sae names the file in a ResourceError; a folder that is
not a path is an InputError naming ``directory``. A tiny hand-built cache: no model.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from trustlab.errors import InputError, ResourceError
from trustlab.interpret import LatentCache, load_latent_cache


@pytest.fixture
def saved(tmp_path):
    cache = LatentCache(
        "m", 0, 2, 2, 10, np.arange(12), np.array([0, 5, 12]), np.array([0, 1, 2]),
        np.array([0, 1], np.int32), np.array([1, 2], np.int32), np.array([1.0, 2.0], np.float32),
    )  # fmt: skip
    folder = cache.save(tmp_path / "cache")
    assert load_latent_cache(folder).n_records == 2  # the intact folder reads back
    return folder


def _damage(folder, name, text=None, data=None):
    path = folder / name
    if text is not None:
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(data)


@pytest.mark.parametrize(
    ("name", "content", "said"),
    [
        ("latent_cache.json", "{ truncated", "could not be read as the JSON"),
        ("latent_cache.json", "[1]", "expected the JSON object LatentCache.save writes, got list"),
        ("latent_cache.json", json.dumps({"format": 1, "model": "m"}), "it lacks layer"),
        ("latent_cache.npz", b"PK\x03\x04 truncated", "could not be read as saved arrays"),
        ("latent_cache.npz", b"", "could not be read as saved arrays"),
    ],
)
def test_a_damaged_cache_names_the_file(saved, name, content, said):
    if isinstance(content, str):
        _damage(saved, name, text=content)
    else:
        _damage(saved, name, data=content)
    with pytest.raises(ResourceError, match=said) as err:
        load_latent_cache(saved)
    assert name in str(err.value)


def test_an_npz_without_the_cache_arrays_names_them(saved, tmp_path):
    np.savez(tmp_path / "other.npz", tokens=np.arange(3))
    _damage(saved, "latent_cache.npz", data=(tmp_path / "other.npz").read_bytes())
    with pytest.raises(ResourceError, match="lacks the array.*token_offsets"):
        load_latent_cache(saved)


@pytest.mark.parametrize("bad", [None, 5])
def test_a_directory_that_is_no_path_is_named(bad):
    with pytest.raises(InputError, match="directory: expected a folder path") as err:
        load_latent_cache(bad)
    assert err.value.argument == "directory"
