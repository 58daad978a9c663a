"""Review 64: ``interpret sae cache --overwrite`` deleted the checkpointed chunks in --out before
it checked --sae and --max-texts, so a run refused for a typo (exit 2) had already thrown away
the chunks of a long stopped run. ``explain`` and ``score`` did the same with the stored rows
of a stopped run (explanations.sqlite, scores.sqlite: its LLM answers). Now they go only once the
run can start (models loaded); a run that starts still starts afresh (for explain and score:
test_interpret_cli's resume tests)."""

from __future__ import annotations

import numpy as np
import pytest

from cli_helpers import one_line, run_main
from sae_cli_data import TEXTS
from trustlab.interpret import SparseAutoencoder


def _sae(tmp_path, model_name):  # given weights of the tiny model's width: no training
    rng = np.random.default_rng(64)
    w_enc, w_dec = rng.normal(size=(48, 16)), rng.normal(size=(16, 48))
    sae = SparseAutoencoder.from_weights(
        w_enc, np.zeros(16), w_dec, np.zeros(48), k=2, model_name=model_name, layer=1
    )
    return sae.save(tmp_path / "sae")


def _chunks(out):
    (out / "chunks").mkdir(parents=True)
    (out / "chunks" / "cache.json").write_text("{}", encoding="utf-8")  # another run's record
    (out / "chunks" / "chunk_000000.npz").write_bytes(b"")
    return sorted(p.name for p in (out / "chunks").iterdir())


def test_a_refused_overwrite_keeps_the_chunks(tmp_path, capsys):
    out = tmp_path / "cache"
    before = _chunks(out)
    base = ["interpret", "sae", "cache", "--out", out, "--overwrite"]
    code, _, err = run_main([*base, "--sae", tmp_path / "no-such-sae"], capsys)
    assert code == 2 and one_line(err).startswith("trustlab: error: --sae:")
    sae_dir = _sae(tmp_path, "no-model-needed")
    code, _, err = run_main([*base, "--sae", sae_dir, "--max-texts", 0], capsys)
    assert code == 2 and "--max-texts" in one_line(err)
    assert sorted(p.name for p in (out / "chunks").iterdir()) == before


def test_an_overwrite_that_runs_starts_afresh(tmp_path, capsys, tiny_llama_folder):
    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(TEXTS[:3]), encoding="utf-8")
    out = tmp_path / "cache"
    _chunks(out)  # chunks of another run: refused without --overwrite, deleted with it
    args = ["interpret", "sae", "cache", "--sae", _sae(tmp_path, str(tiny_llama_folder)),
            "--texts", texts, "--out", out, "--overwrite"]  # fmt: skip
    code, _, err = run_main(args, capsys)
    assert code == 0, err
    assert (out / "latent_cache.npz").is_file()


@pytest.mark.parametrize(
    ("step", "store", "bad"),
    [
        ("explain", "explanations.sqlite", ["--cache", "no-such-cache", "--explainer", "template"]),
        ("score", "scores.sqlite", ["--explanations", "no-such-run", "--answer", "bogus"]),
    ],
)
def test_a_refused_overwrite_keeps_the_stored_rows(tmp_path, capsys, step, store, bad):
    out = tmp_path / "out"
    out.mkdir()
    (out / store).write_bytes(b"the rows of a stopped run")
    code, _, err = run_main(["interpret", "sae", step, *bad, "--out", out, "--overwrite"], capsys)
    assert code == 2 and one_line(err).startswith("trustlab: error: --"), err
    assert (out / store).read_bytes() == b"the rows of a stopped run"
