"""`sae explain`: the rows of explanations.jsonl and result.json name the explainer alike, as a
later step loads it again (a model folder by its absolute path, not the folder's last
component, which the rows of a model explainer used to record)."""

from __future__ import annotations

import json

from cli_helpers import run_main
from sae_cli_data import SETTINGS, TEXTS, train_args


def test_rows_and_result_record_the_same_explainer(tmp_path, capsys, tiny_llama_folder):
    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(TEXTS), encoding="utf-8")
    sae_dir, cache_dir, out = tmp_path / "sae", tmp_path / "cache", tmp_path / "expl"
    assert (
        run_main([*train_args(tiny_llama_folder, texts), *SETTINGS, "--out", sae_dir], capsys)[0]
        == 0
    )
    cache = ["interpret", "sae", "cache", "--sae", sae_dir, "--texts", texts, "--out", cache_dir]
    assert run_main(cache, capsys)[0] == 0
    args = ["interpret", "sae", "explain", "--cache", cache_dir, "--subject", tiny_llama_folder,
            "--explainer", tiny_llama_folder, "--max-latents", 2, "--min-examples", 1,
            "--n-train", 4, "--max-new-tokens", 4, "--out", out]  # fmt: skip
    code, _, err = run_main(args, capsys)
    assert code == 0, err
    rows = [json.loads(x) for x in (out / "explanations.jsonl").read_text().splitlines()]
    recorded = json.loads((out / "result.json").read_text())["explainer"]
    assert recorded == str(tiny_llama_folder.resolve())
    assert rows and all(r["explainer"] == recorded for r in rows), rows
