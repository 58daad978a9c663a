"""Review 58 (second reading): the '--overwrite deletes them' hint of ``interpret sae cache`` is
only given where --out holds chunks; a file named ``chunks`` in --out (which --overwrite does not
delete) is refused as a folder that cannot be created, without the hint."""

from __future__ import annotations

import numpy as np

from cli_helpers import one_line, run_main
from sae_cli_data import TEXTS
from trustlab.interpret import SparseAutoencoder


def test_a_chunks_file_is_refused_without_the_overwrite_hint(tmp_path, capsys, tiny_llama_folder):
    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(TEXTS), encoding="utf-8")
    sae_dir = tmp_path / "sae"
    rows = np.random.default_rng(5).normal(size=(64, 48)).astype(np.float32)
    sae = SparseAutoencoder(n_latents=16, k=2, max_epochs=1, batch_size=64, random_state=0)
    sae.fit(rows, model_name=str(tiny_llama_folder), layer=1).save(sae_dir)
    out = tmp_path / "cache"
    out.mkdir()
    (out / "chunks").write_text("not a folder", encoding="utf-8")
    args = ["interpret", "sae", "cache", "--sae", sae_dir, "--texts", texts, "--out", out]
    code, _, err = run_main([*args, "--overwrite"], capsys)
    line = one_line(err)
    assert code == 2 and "--out: expected a directory that can be created" in line, err
    assert "--overwrite deletes them" not in line, err
