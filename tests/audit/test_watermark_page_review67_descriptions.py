"""The watermark evaluation page refuses descriptions that are no mapping in words (review 67).

Measured on 1b2aaee5 (noticed beside the meta check of 97c8eb12): ``build_evaluation_page(
evaluation, descriptions="abc")`` stopped on Python's ``ValueError: dictionary update sequence
element #0 has length 1; 2 is required`` (``[1, 2]``: ``TypeError``) from ``dict(descriptions)``,
though a mapping with a value that is no DescriptionScores was already an InputError naming
``descriptions``. Now anything but None or a mapping gets that InputError too.
"""

from __future__ import annotations

import pytest

from trustlab.errors import InputError


@pytest.mark.parametrize("descriptions", ["abc", [1, 2], [("a", 1, 2)], 5], ids=repr)
def test_descriptions_that_are_no_mapping_are_refused(descriptions):
    from trustlab.audit.sections.watermark import build_evaluation_page
    from trustlab.watermark.evaluation import PredictorEvaluation

    evaluation = object.__new__(PredictorEvaluation)  # the class check passes; no field read
    with pytest.raises(InputError, match=r"^descriptions: expected a mapping") as info:
        build_evaluation_page(evaluation, descriptions)
    assert info.value.argument == "descriptions"
