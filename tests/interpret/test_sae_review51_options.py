"""``sae explain`` checks its counts before any model loads: ``--n-train 0`` gave every latent an
empty explanation (recorded as 0 activating examples) with exit 0, and a negative
``--n-train``, ``--max-new-tokens`` or ``--min-examples`` was refused only after the models
loaded (or, for ``--max-new-tokens``, named ``max_new_tokens``)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cli_helpers import one_line, run_main
from trustlab.interpret import LatentCache


def _cache(tmp_path):
    # model "m" loads from nowhere: a check after loading would name --cache instead
    cache = LatentCache(
        model="m", layer=1, n_latents=4, n_contexts=1, n_tokens=3,
        tokens=np.arange(4), token_offsets=np.array([0, 4]),
        latent_offsets=np.array([0, 0, 1, 2, 2]), contexts=np.zeros(2, np.int32),
        positions=np.array([1, 2], np.int32), activations=np.ones(2, np.float32), sae=None,
    )  # fmt: skip
    cache.save(tmp_path / "cache")
    return tmp_path / "cache"


@pytest.mark.parametrize(
    ("option", "value"),
    [("--n-train", 0), ("--n-train", -3), ("--max-new-tokens", 0), ("--min-examples", -1)],
)
def test_explain_refuses_bad_counts_before_loading(tmp_path, capsys, option, value):
    args = ["interpret", "sae", "explain", "--cache", _cache(tmp_path), "--explainer",
            "template", "--latents", "1", "--out", tmp_path / "out", option, value]  # fmt: skip
    code, _, err = run_main(args, capsys)
    assert code == 2
    line = one_line(err)
    assert line.startswith(f"trustlab: error: {option}: ") and str(value) in line
    assert not (tmp_path / "out").exists()


def test_score_of_a_run_whose_cache_is_gone_names_explanations(tmp_path, capsys):
    """``sae score`` of an explain run whose cache was moved or deleted was 'trustlab: failed:
    ...', exit 1; it is one line naming --explanations, exit 2, as ``sae report`` says it."""
    expl = tmp_path / "expl"
    expl.mkdir()
    info = {"explainer": "template", "subject": "m", "cache": str(tmp_path / "gone"),
            "n_train": 4, "n_test": 50, "min_examples": 1, "seed": 0}  # fmt: skip
    (expl / "result.json").write_text(json.dumps(info), encoding="utf-8")
    rows = [{"latent": 1, "text": "cats"}, {"latent": 2, "text": "dogs"}]
    (expl / "explanations.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = ["interpret", "sae", "score", "--explanations", expl, "--methods", "embedding",
            "--out", tmp_path / "scores"]  # fmt: skip
    code, _, err = run_main(args, capsys)
    assert code == 2
    line = one_line(err)
    assert (
        line.startswith("trustlab: error: --explanations: ")
        and "latent cache is still there" in line
    )
    assert not (tmp_path / "scores").exists()


def test_score_rows_count_the_examples_without_a_parsed_answer():
    """With ``--answer list`` the examples of a batch whose answer did not parse are left out of
    detection and fuzzing; the rows kept only the parsed ones, so nothing said how many."""
    from rule_scorer import RuleScorer
    from test_sae_explain import decode, digit_cache

    from trustlab.cli.interpret import _per_example
    from trustlab.interpret import detection_score, latent_examples

    cache = digit_cache(4, n_contexts=200, length=80, digit_rate=0.02)
    examples = latent_examples(cache, 0, ctx_len=16, random_state=4)
    result = detection_score(examples, "digits", RuleScorer(garbage_every=3), decode)
    row = _per_example("detection", result)
    assert row["detection_n_failed"] == result.n_failed == 30
    assert len(row["detection_examples"]["quantiles"]) == result.n_examples - 30
