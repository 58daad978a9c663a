"""Review 58: ``interpret sae cache`` refusing the chunks of a run with other settings says how to
proceed on the command line (--overwrite, or another --out), not only the library's words."""

from __future__ import annotations

import numpy as np

from cli_helpers import one_line, run_main
from sae_cli_data import TEXTS
from trustlab.interpret import SparseAutoencoder, cache_latents
from trustlab.llm import load_model


def test_chunks_of_other_settings_point_to_overwrite(tmp_path, capsys, tiny_llama_folder):
    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(TEXTS), encoding="utf-8")
    sae_dir = tmp_path / "sae"  # an SAE fitted on random rows of the model's width: no training
    rows = np.random.default_rng(58).normal(size=(64, 48)).astype(np.float32)
    sae = SparseAutoencoder(n_latents=16, k=2, max_epochs=1, batch_size=64, random_state=0)
    sae.fit(rows, model_name=str(tiny_llama_folder), layer=1).save(sae_dir)
    out = tmp_path / "cache"
    args = ["interpret", "sae", "cache", "--sae", sae_dir, "--texts", texts, "--out", out]
    # the chunks a stopped `cache --max-texts 3` leaves (the command checkpoints to out/chunks)
    lm = load_model(str(tiny_llama_folder))
    cache_latents(lm, sae, TEXTS[:3], checkpoint=out / "chunks")
    code, _, err = run_main([*args, "--max-texts", 4], capsys)
    line = one_line(err)
    assert code == 2 and "holds the chunks of another run" in line, err
    assert line.endswith("; --overwrite deletes them and starts afresh"), err
