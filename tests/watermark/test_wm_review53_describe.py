"""Review 5 of the watermark describer: a prediction at the invisible level (score 4 to 5) cannot
tell a clean image from a mark too faint to see (on 200 images of the training recipe, 59 of the
73 predicted invisible carried a mark, 30 of the 38 whose heatmap located a region), yet its
paragraph said "No watermark was found ... no overlay, text or pattern ... the content is
unaffected" beside a JSON with a heatmap box, cell and content type. The paragraph now says no
*visible* watermark, claims no impact, and names the heatmap's region when there is one."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.watermark.backends import TemplateBackend
from trustlab.watermark.describer import describe, parse_description
from trustlab.watermark.nr import WatermarkPredictions
from trustlab.watermark.vocabulary import WatermarkFacts

# what the describer may call the Middle-left cell
MIDDLE_LEFT = ("the middle of the left side", "the left-centre area", "the left middle area")


def _predictions() -> WatermarkPredictions:
    """Three predictions: invisible with a located region (Middle-left), invisible without a
    region, and a visible mark."""
    levels = ("invisible", "invisible", "visible")
    n = len(levels)
    return WatermarkPredictions(
        scores=np.array([4.55, 4.9, 1.5]),
        expected_scores=np.array([4.8, 4.95, 1.6]),
        levels=levels,
        level_probabilities=np.full((n, 5), 0.2),
        content_types=("pattern", "logo", "text"),
        content_probabilities=np.full((n, 4), 0.25),
        boxes=np.array([[64, 160, 80, 168], [-1, -1, -1, -1], [10, 10, 60, 30]]),
        cells=("Middle-left", "Center", "Top-left"),
        orientations=("horizontal", "horizontal", "horizontal"),
        present=np.array([False, False, True]),
        located=np.array([True, False, True]),
        image_sizes=((256, 256),) * n,
        heatmaps=np.zeros((n, 8, 8), np.float16),
    )


def test_invisible_level_prediction_says_no_visible_mark_and_where_the_heatmap_points():
    pred = _predictions()
    assert [pred.faint_region(i) for i in range(3)] == ["Middle-left", None, None]
    texts = TemplateBackend(random_state=0).describe_predictions(pred, ["Describe it."] * 3)
    for text in texts[:2]:
        assert "visible watermark" in text or "visible sign of a watermark" in text
        assert "No watermark was found" not in text
        assert "unaffected" not in text  # the impact of a faint mark was not estimated
        parsed = parse_description(text)
        assert not parsed.present and parsed.level == "invisible" and parsed.final_sentence_ok
    assert "heatmap" in texts[0] and any(w in texts[0] for w in MIDDLE_LEFT)
    assert "heatmap" not in texts[1]
    parsed = parse_description(texts[2])
    assert parsed.present and parsed.cell == "Top-left" and parsed.level == "visible"


def test_every_absent_wording_parses_as_absent():
    facts = WatermarkFacts(present=False, score=5.0, level="invisible")
    for seed in range(40):
        for region in (None, "Bottom-right", "Center"):
            text = describe(facts, random_state=seed, faint_region=region)
            assert not parse_description(text).present
            assert text.endswith("The watermark visibility is: invisible.")


@pytest.mark.parametrize(("present", "region"), [(True, "Center"), (False, "middle"), (False, 3)])
def test_faint_region_refused_with_a_present_mark_or_an_unknown_cell(present, region):
    facts = WatermarkFacts(present=present, score=4.5, level="invisible")
    with pytest.raises(InputError, match="faint_region"):
        describe(facts, random_state=0, faint_region=region)
