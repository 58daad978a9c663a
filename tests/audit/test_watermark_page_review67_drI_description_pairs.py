"""The watermark evaluation page reads descriptions given as pairs or empty again (review 67 I).

c5786d74 refused every ``descriptions`` that is no Mapping, to turn ``'abc'`` (Python's raw
ValueError from ``dict``) into an InputError. That also refused what ``dict`` had read since the
page existed and what ``meta`` beside it still takes: measured on c5786d74, ``[('predictor',
scores)]`` and an empty ``[]`` or ``()`` gave 'descriptions: expected a mapping from names to
DescriptionScores'; on its parent the first drew the descriptions section, the empty ones the page
without it. Now ``dict`` reads them as before and only what it cannot read is the InputError
(c5786d74's test: 'abc', [1, 2], [('a', 1, 2)], 5).
"""

from __future__ import annotations

import pytest

from trustlab.audit.sections.watermark import build_evaluation_page
from trustlab.watermark.evaluation import PredictorEvaluation
from trustlab.watermark.metrics import score_descriptions


def _evaluation() -> PredictorEvaluation:
    vis = {"srcc": 0.9, "plcc": 0.8, "exact_level_accuracy": 0.5, "within_one_level_accuracy": 1}
    return PredictorEvaluation(
        visibility={**vis, "n": 4},
        location={"cell_accuracy": 0.5, "heatmap_iou": 0.25, "n": 4},
        content_type_accuracy=0.75,
        controls={},
        per_kind={},
        invisible_auroc={},
        min_opacity=0.1,
        n_images=9,
        invisible_counts={},
    )


def test_pairs_of_names_and_scores_draw_the_descriptions_section():
    scores = score_descriptions(["a red mark in the corner"], ["a red mark at the corner"])
    as_dict = build_evaluation_page(_evaluation(), {"predictor": scores})
    as_pairs = build_evaluation_page(_evaluation(), [("predictor", scores)])
    assert [s.id for s in as_pairs.sections] == [s.id for s in as_dict.sections]
    assert as_pairs.sections[-1].id == "descriptions"


@pytest.mark.parametrize("empty", [[], ()], ids=repr)
def test_empty_descriptions_leave_the_section_out(empty):
    ids = [s.id for s in build_evaluation_page(_evaluation(), empty).sections]
    assert ids == [s.id for s in build_evaluation_page(_evaluation(), None).sections]
    assert "descriptions" not in ids
