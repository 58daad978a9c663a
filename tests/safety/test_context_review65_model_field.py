"""load_casebench_outputs / score --model naming a record field (review 65).

``--model safe_rate`` in logits mode read each record's human share of safe votes as the
judge's P(safe) and scored it against itself (accuracy 0.983 on the synthetic set, exit 0).
"""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.safety.context import load_casebench_outputs, synthetic_casebench
from trustlab.safety.context.synthetic import make_synthetic_outputs


@pytest.mark.parametrize("field", ["safe_rate", "category", "query"])
def test_model_naming_a_record_field_is_refused(field):
    records = make_synthetic_outputs(synthetic_casebench(), "logits")
    with pytest.raises(
        InputError, match=rf"^model: expected a model name, not a record field.*got '{field}'"
    ):
        load_casebench_outputs(records, model=field)
    assert load_casebench_outputs(records, model="toy-judge").model == "toy-judge"
