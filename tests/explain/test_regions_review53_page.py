"""The evaluation page says why a table is empty (review 53): with a dynamic-tau model and no
thresholds (evaluate --deltas none) the delta section said 'No dynamic-tau model was evaluated.';
a black-box-only evaluation's localisation and fidelity tables were '(no rows)' without a word."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("matplotlib")

from trustlab.audit.sections.regions import build_page  # noqa: E402
from trustlab.explain.regions import RegionsEvaluation  # noqa: E402

_DYNAMIC = {"model": "m", "kind": "dynamic", "accuracy": 0.75, "mean_kept": 0.02,
            "mean_tau": 0.05, "certain": 1.0}  # fmt: skip
_BLACKBOX = {"model": "bb", "kind": "blackbox", "accuracy": 0.5, "mean_kept": 1.0}


def _texts(ev: RegionsEvaluation) -> dict[str, str]:
    return {s.id: s.blocks[0].text for s in build_page(ev).sections if s.id != "examples"}


def _evaluation(*accuracy: dict, localisation: tuple = ()) -> RegionsEvaluation:
    return RegionsEvaluation(
        dataset="hand-made", n_images=4, object_fraction=0.1, accuracy=accuracy,
        localisation=localisation, fidelity=(), delta_ablation=(),
    )  # fmt: skip


def test_delta_section_of_a_dynamic_model_without_thresholds():
    loc = {"model": "m", "precision": 0.9, "iou": 0.5, "pxap": 0.8, "random_precision": 0.1,
           "empty_masks": 0.0, "random_empty_masks": 0.0}  # fmt: skip
    texts = _texts(_evaluation(_DYNAMIC, localisation=(loc,)))
    assert "No dynamic-tau model was evaluated" not in texts["delta"]
    assert texts["delta"].startswith("No certainty thresholds were given")
    assert texts["fidelity"].endswith("No deletion or insertion levels were given: no curves.")
    assert "No model with a selection" not in texts["localisation"]


def test_black_box_only_page_says_why_tables_are_empty():
    texts = _texts(_evaluation(_BLACKBOX))
    assert texts["delta"] == "No dynamic-tau model was evaluated."
    assert texts["localisation"].endswith(
        "No model with a selection was evaluated: a black box on whole images has no mask."
    )
    assert texts["fidelity"].endswith(
        "No region-sparse (P2P) model was evaluated: the curves need a selector's scores."
    )
