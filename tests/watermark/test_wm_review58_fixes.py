"""Review 58 (watermark) fixes: names with sentence marks, AUROC counts, early argument checks,
the prediction index, visibility_numbers' inputs and a stable expected score."""

from __future__ import annotations

import pytest

from trustlab.watermark import ObjectRelation, WatermarkFacts, describe, parse_description


@pytest.mark.parametrize("name", ["Yahoo! logo", "Who? sign", "a?!b", "x. y! z?"])
def test_object_names_with_sentence_marks_keep_their_relation(name):
    # "Yahoo! logo": the parser split the sentence after "!" and lost the relation
    facts = WatermarkFacts(True, 2.5, "moderate", relations=(ObjectRelation(name, "inside"),))
    for seed in range(3):
        parsed = parse_description(describe(facts, random_state=seed))
        assert [r for _, r in parsed.relations] == ["inside"]
        assert "!" not in parsed.relations[0][0] and "?" not in parsed.relations[0][0]
