"""The evaluation page's localisation table shows the share of images whose random same-area mask
alone came out empty (review 52): those images are left out of the random precision only, so its
'precision - random' compared averages over other images without a word on the page (the text
summary and evaluation.json said so); the examples figure's caption names the models beyond its
four rows (they were left out without a word)."""

from __future__ import annotations

import dataclasses

import pytest

pytest.importorskip("torch")
pytest.importorskip("matplotlib")

from trustlab.audit.sections.regions import build_page  # noqa: E402
from trustlab.explain.regions import RegionsEvaluation  # noqa: E402


def test_localisation_table_shows_random_masks_alone_empty():
    ev = RegionsEvaluation(
        dataset="hand-made", n_images=4, object_fraction=0.1,
        accuracy=({"model": "m", "kind": "dynamic", "accuracy": 0.75, "mean_kept": 0.02,
                   "mean_tau": 0.05, "certain": 1.0},
                  {"model": "pix", "kind": "blackbox", "accuracy": 0.5, "mean_kept": 0.2}),
        localisation=({"model": "m", "precision": 0.9, "iou": 0.5, "pxap": 0.8,
                       "random_precision": 0.1, "empty_masks": 0.0, "random_empty_masks": 0.25},
                      {"model": "pix", "precision": 0.1, "iou": 0.05, "pxap": None,
                       "random_precision": None, "empty_masks": 0.0}),
        fidelity=(), delta_ablation=(),
    )  # fmt: skip
    section = {s.id: s for s in build_page(ev).sections}["localisation"]
    paragraph, table = section.blocks[0], section.blocks[1]
    column = table.columns.index("random mask empty")
    assert [row[column] for row in table.rows] == [0.25, None]
    assert "random mask empty" in paragraph.text and "random precision only" in paragraph.text


def test_examples_caption_names_the_models_beyond_its_rows():
    """Only the first four P2P models get a row of examples; the others were left out silently."""
    import numpy as np

    from trustlab.explain.regions import checkpoint_data, evaluate_regions, load_checkpoint

    model = load_checkpoint("p2p_fixed")
    data = checkpoint_data("test", random_state=3).subset(range(2))
    y = np.asarray(data.class_names)[data.labels]
    names = [f"m{i}" for i in range(6)]
    ev = evaluate_regions({n: model for n in names}, data.images, y, data.masks, deltas=(),
                          deletion=(), insertion=(), random_state=0)  # fmt: skip
    section = {s.id: s for s in build_page(ev).sections}["examples"]
    caption = section.blocks[0].caption
    assert caption.endswith("; not shown: m4, m5")
    four = dataclasses.replace(ev, explanations={n: ev.explanations[n] for n in names[:4]})
    assert "not shown" not in build_page(four).sections[-1].blocks[0].caption


def test_reference_row_has_no_precision_difference_without_a_precision():
    """The reference row's 'precision - reference' was 0.0 beside an n/a precision (every mask of
    the reference empty); the difference is n/a there, 0 where the precision exists."""
    acc = {"kind": "dynamic", "accuracy": 0.5, "mean_kept": 0.0, "mean_tau": 1.0, "certain": 0.0}
    loc = {"iou": 0.0, "pxap": 0.1, "random_precision": None, "empty_masks": 1.0}
    ev = RegionsEvaluation(
        dataset="hand-made", n_images=4, object_fraction=0.1,
        accuracy=({"model": "p2p_dynamic", **acc}, {"model": "p2p_watershed", **acc}),
        localisation=({"model": "p2p_dynamic", "precision": float("nan"), **loc},
                      {"model": "p2p_watershed", "precision": 0.5, **loc}),
        fidelity=(), delta_ablation=(),
    )  # fmt: skip
    table = {s.id: s for s in build_page(ev).sections}["ablations"].blocks[1]
    column = table.columns.index("precision - reference")
    assert [row[0] for row in table.rows] == ["p2p_dynamic", "p2p_watershed"]
    assert [row[column] for row in table.rows] == [None, None]
    assert table.rows[0][table.columns.index("accuracy - reference")] == 0.0
