"""`sae explain --cache` of a damaged cache says what is wrong (diff review 64 N of ebb9fb6b,
sister): ebb9fb6b put load_sae's reason on the --sae line, but --cache (and score's cache of an
explain run) still said only "--cache: expected a folder written by `sae cache`, got ..." though
load_latent_cache names the file and the fault since 54a621e1.
"""

from __future__ import annotations

import numpy as np

from cli_helpers import one_line, run_main
from trustlab.interpret import LatentCache


def test_a_damaged_cache_is_named_on_the_cache_line(tmp_path, capsys):
    cache = LatentCache(
        "m", 0, 2, 2, 10, np.arange(12), np.array([0, 5, 12]), np.array([0, 1, 2]),
        np.array([0, 1], np.int32), np.array([1, 2], np.int32), np.array([1.0, 2.0], np.float32),
    )  # fmt: skip
    folder = cache.save(tmp_path / "cache")
    (folder / "latent_cache.npz").write_bytes(b"PK\x03\x04junk")
    args = ["interpret", "sae", "explain", "--cache", folder, "--explainer", "template",
            "--out", tmp_path / "out"]  # fmt: skip
    code, _, err = run_main(args, capsys)
    line = one_line(err)
    assert code == 2 and "--cache: expected a folder written by `sae cache`" in line
    assert "latent_cache.npz: could not be read as saved arrays" in line
