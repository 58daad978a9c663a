"""``sae score --seed`` (conventions lead L8): the CLI could neither vary nor state the seed of
detection and fuzzing (their shuffles and bootstraps, random_state 0 always)."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import numpy as np
from test_sae_review52_controls import _folder

from cli_helpers import one_line, run_main


def _score(tmp_path, capsys, monkeypatch, *extra, out="scores"):
    """Run ``sae score`` (detection and fuzzing by stand-ins that record their random_state)."""
    import trustlab.interpret as interpret
    import trustlab.llm as llm

    seen = []

    def stand_in(examples, text, judge, decode, *, answer, random_state=0):
        seen.append(random_state)
        quantiles = [e.quantile for e in examples.test] + [-1] * len(examples.not_active)
        return SimpleNamespace(balanced_accuracy=0.5, auroc=0.5, interval=(math.nan,) * 2,
                               scores=np.zeros(len(quantiles)), quantiles=np.array(quantiles),
                               n_failed=0, predicted=np.zeros(len(quantiles)))  # fmt: skip

    subject = SimpleNamespace(tokenizer=SimpleNamespace(decode=lambda ids: "x"))
    monkeypatch.setattr(llm, "load_model", lambda *args, **kwargs: subject)
    monkeypatch.setattr(interpret, "detection_score", stand_in)
    monkeypatch.setattr(interpret, "fuzzing_score", stand_in)
    folder = tmp_path / "expl"
    if not folder.exists():
        folder = _folder(tmp_path, {1: "cats", 2: "dogs"})
    args = ["interpret", "sae", "score", "--explanations", folder, "--methods",
            "detection,fuzzing", "--out", tmp_path / out, "--json", *extra]  # fmt: skip
    code, stdout, err = run_main(args, capsys)
    return code, stdout, err, seen


def test_score_passes_its_seed_to_detection_and_fuzzing(tmp_path, capsys, monkeypatch):
    code, stdout, err, seen = _score(tmp_path, capsys, monkeypatch, "--seed", "7")
    assert code == 0, err
    assert seen and set(seen) == {7}  # 2 latents x (true, shuffled) x 2 methods
    assert len(seen) == 8
    assert json.loads(stdout)["seed"] == 7
    assert json.loads((tmp_path / "scores" / "result.json").read_text())["seed"] == 7


def test_score_seed_defaults_to_0_and_rows_stored_with_another_seed_are_not_reused(
    tmp_path, capsys, monkeypatch
):
    code, stdout, err, seen = _score(tmp_path, capsys, monkeypatch)
    assert code == 0, err
    assert set(seen) == {0} and len(seen) == 8 and json.loads(stdout)["seed"] == 0
    # an interrupted run: its rows are stored, its outputs not written yet
    for name in ("result.json", "scores.jsonl"):
        (tmp_path / "scores" / name).unlink()
    code, stdout, err, again = _score(tmp_path, capsys, monkeypatch, "--seed", "3")
    assert code == 0, err
    assert set(again) == {3} and len(again) == 8  # seed 0's rows are not seed 3's
    for name in ("result.json", "scores.jsonl"):
        (tmp_path / "scores" / name).unlink()
    code, stdout, err, resumed = _score(tmp_path, capsys, monkeypatch, "--seed", "0")
    assert code == 0, err
    assert resumed == []  # the same seed's stored rows are reused


def test_score_refuses_a_negative_seed(tmp_path, capsys, monkeypatch):
    code, stdout, err, seen = _score(tmp_path, capsys, monkeypatch, "--seed", "-1")
    assert code == 2 and not seen
    assert one_line(stdout + err).endswith("--seed: expected a non-negative integer seed, got -1")


def test_score_help_documents_seed(capsys):
    code, stdout, err = run_main(["interpret", "sae", "score", "--help"], capsys)
    assert code == 0 and "--seed" in stdout and "bootstrap" in stdout
