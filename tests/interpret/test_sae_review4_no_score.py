"""A latent firing in every context has no non-activating example, so its detection, fuzzing,
embedding and surprisal scores are NaN. ``sae score`` (summary and result.json/--json) and
``sae_report`` (summary, plot, means) say how many latents the means leave out and why."""

from __future__ import annotations

import json
import math

import numpy as np

from cli_helpers import run_main
from sae_cli_data import explain_folder
from trustlab.interpret import LatentCache
from trustlab.interpret.sae.report import sae_report

EVERYWHERE = "no non-activating example (the latent fires in every context)"


def _folders(tmp_path):
    """24 contexts: latent 1 fires in every one (no non-activating window), latent 2 in half."""
    n = 24
    cache = LatentCache(
        model="m", layer=1, n_latents=16, n_contexts=n, n_tokens=4 * n,
        tokens=np.arange(4 * n) % 50, token_offsets=np.arange(0, 4 * n + 1, 4),
        latent_offsets=np.array([0, 0, n, n + n // 2, *[n + n // 2] * 13]),
        contexts=np.r_[np.arange(n), np.arange(0, n, 2)].astype(np.int32),
        positions=np.ones(n + n // 2, np.int32),
        activations=np.linspace(1, 2, n + n // 2).astype(np.float32), sae=None,
    )  # fmt: skip
    return explain_folder(tmp_path, cache, n_test=10)


def test_score_says_which_latents_fire_everywhere(tmp_path, capsys, monkeypatch):
    from types import SimpleNamespace

    import trustlab.interpret as interpret
    import trustlab.llm as llm

    def embedding(examples, text, decode):  # as embedding_score: NaN without both kinds
        quantiles = [e.quantile for e in examples.test] + [-1] * len(examples.not_active)
        both = examples.test and examples.not_active
        return SimpleNamespace(auroc=0.7 if both else math.nan, interval=(math.nan,) * 2,
                               scores=np.zeros(len(quantiles)),
                               quantiles=np.array(quantiles))  # fmt: skip

    subject = SimpleNamespace(tokenizer=SimpleNamespace(decode=lambda ids: "x"))
    monkeypatch.setattr(llm, "load_model", lambda *args, **kwargs: subject)
    monkeypatch.setattr(interpret, "embedding_score", embedding)
    args = ["interpret", "sae", "score", "--explanations", _folders(tmp_path), "--methods",
            "embedding", "--out", tmp_path / "scores"]  # fmt: skip
    code, out, err = run_main(args, capsys)
    assert code == 0, err
    said = " ".join(out.split())
    assert (
        f"embedding: 1 of 2 latents have no score (NaN in the rows), left out of the means: 1 ({EVERYWHERE})"
        in said
    )
    result = json.loads((tmp_path / "scores" / "result.json").read_text())
    assert result["n_scored"]["true"] == {"embedding": 1}
    assert result["no_score"] == {"embedding": {EVERYWHERE: 1}}
    code, out, err = run_main([*args[:-1], tmp_path / "again", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["no_score"] == {"embedding": {EVERYWHERE: 1}}


def test_report_counts_and_names_the_latents_left_out():
    rows = []
    for i, score in enumerate([0.9, 0.7, math.nan, 0.8]):
        quantiles = [0, 1] if math.isnan(score) else [0, 1, -1]  # latent 2: no non-activating
        shown = {"quantiles": quantiles, "predicted": [1] * len(quantiles)}
        rows.append({"latent": i, "shuffled": False, "explanation": f"e{i}", "detection": score,
                     "detection_examples": shown})  # fmt: skip
    report = sae_report(rows, n_best=1)
    assert report.means["detection"]["n"] == 3
    assert report.means["detection"]["no_score"] == {EVERYWHERE: 1}
    assert f"over 3 of 4 latents; without a score: 1 ({EVERYWHERE})" in report.summary()
    labels = [t.get_text() for t in report.plot().get_xticklabels()]
    assert labels == ["detection\n(3 of 4 latents)"]
    assert json.loads(json.dumps(report.to_dict()))["means"]["detection"]["no_score"]


def test_no_score_reason_tells_missing_kinds_apart():
    from trustlab.interpret.sae.report import no_score_reason

    assert no_score_reason([0, 3]) == EVERYWHERE
    assert no_score_reason([0, -1]) != EVERYWHERE
    assert no_score_reason([]) != EVERYWHERE and no_score_reason(None) != EVERYWHERE
