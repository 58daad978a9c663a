"""The loader's error names a CI value's field without pydantic's union tag (review 65).

A context value that is neither text nor a mapping (a number, a list, null) was reported as
'field context.sender.platform_type.constrained-str: ...': the tag of the non-empty text member
of the text-or-mapping union, which is no field of the record.
"""

from __future__ import annotations

import copy

import pytest

from trustlab.errors import InputError
from trustlab.safety.context import load_casebench, synthetic_casebench

RECORDS = synthetic_casebench().records()[:2]


@pytest.mark.parametrize("outputs", [False, True])
@pytest.mark.parametrize(
    ("group", "key", "value"),
    [("sender", "platform_type", 5), ("recipient", "background", ["a"]), ("recipient", "type", "")],
)
def test_bad_context_value_names_the_field(group, key, value, outputs):
    records = copy.deepcopy(RECORDS)
    records[1]["context"][group][key] = value
    with pytest.raises(InputError) as caught:
        load_casebench(records, outputs=outputs)
    assert str(caught.value).startswith(f"path: record 1: field context.{group}.{key}: ")
