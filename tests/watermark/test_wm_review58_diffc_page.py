"""Review 58 (diffC, second reading of f85bc9c): the evaluation page's invisible-mark table gives
the images each AUROC compared, as summary() does; it showed 'blind strength 36 | 1.000' from 1
marked vs 2 clean images with no count."""

from __future__ import annotations

from trustlab.audit.sections.watermark import build_evaluation_page
from trustlab.watermark.evaluation import PredictorEvaluation


def test_the_page_gives_the_images_each_invisible_auroc_compared():
    vis = {"srcc": 0.9, "plcc": 0.8, "exact_level_accuracy": 0.5, "within_one_level_accuracy": 1.0}
    ev = PredictorEvaluation(
        visibility={**vis, "n": 4},
        location={"cell_accuracy": 0.5, "heatmap_iou": 0.25, "n": 4},
        content_type_accuracy=0.75,
        controls={},
        per_kind={},
        invisible_auroc={"blind strength 36": 1.0, "dwtDct strength 1": 0.25},
        min_opacity=0.1,
        n_images=9,
        invisible_counts={"blind strength 36": (1, 2), "dwtDct strength 1": (4, 2)},
    )
    (section,) = [s for s in build_evaluation_page(ev).sections if s.id == "invisible"]
    (table,) = [b for b in section.blocks if hasattr(b, "rows")]
    assert table.columns[-2:] == ["marked", "clean"]
    assert [[row[0], *row[-2:]] for row in table.rows] == [
        ["blind strength 36", 1, 2],
        ["dwtDct strength 1", 4, 2],
    ]
    assert section.data["invisible_counts"] == {k: list(v) for k, v in ev.invisible_counts.items()}
