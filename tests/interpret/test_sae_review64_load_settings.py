"""load_sae checks the settings stored in trustlab_sae.json (review 64).

It built the SAE from them unchecked: activation 'gelu' loaded and encoded as TopK, k=0 gave
all-zero codes, k above the latents a raw numpy ValueError at encode, and n_latents 16 beside
weights of 8 latents loaded. Now a ResourceError names the file and the setting, and
`sae cache --sae` says it on its one line (it said only "expected a folder written by `sae
train`"). A 4 -> 8 SAE of given weights: no training, no model loaded.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from cli_helpers import one_line, run_main
from trustlab.errors import ResourceError
from trustlab.interpret import SparseAutoencoder, load_sae


@pytest.fixture
def folder(tmp_path):
    rng = np.random.default_rng(0)
    sae = SparseAutoencoder.from_weights(
        rng.normal(size=(4, 8)), np.zeros(8), rng.normal(size=(8, 4)), np.zeros(4), k=2
    )
    return sae.save(tmp_path / "sae")


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"activation": "gelu"}, "activation: expected one of"),
        ({"k": 0}, "k: expected an integer >= 1, got 0"),
        ({"k": 50}, r"k: expected at most n_latents \(8\), got 50"),
        ({"k": "3"}, "k: expected an integer"),
        ({"n_latents": 16}, "its settings give 16 latents, its weights 8"),
    ],
)
def test_bad_stored_settings_name_the_file(folder, change, said):
    path = folder / "trustlab_sae.json"
    info = json.loads(path.read_text(encoding="utf-8"))
    info["params"].update(change)
    path.write_text(json.dumps(info), encoding="utf-8")
    with pytest.raises(ResourceError, match=said) as err:
        load_sae(folder)
    assert "trustlab_sae.json" in str(err.value)


def test_the_saved_settings_still_load(folder):
    sae = load_sae(folder)
    assert (sae.activation, sae.k, sae.n_latents_) == ("topk", 2, 8)


def test_the_cli_says_what_is_wrong_with_the_sae_folder(folder, tmp_path, capsys):
    (folder / "sae_weights.safetensors").unlink()
    args = ["interpret", "sae", "cache", "--sae", folder, "--out", tmp_path / "out"]
    code, _, err = run_main(args, capsys)
    line = one_line(err)
    assert code == 2 and "--sae: expected a folder written by `sae train`" in line
    assert "expected trustlab_sae.json and sae_weights.safetensors" in line
