"""A set whose records are all duplicated (a file concatenated twice) has no query with exactly
one record of each context: the refusal said "a record of each context, got 0", which every
query has (review 55)."""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.safety.context import human_statistics, load_casebench, synthetic_casebench


def test_duplicated_records_are_refused_naming_the_one_to_one_pairing():
    records = synthetic_casebench().records()[:4]
    data = load_casebench(records + records)
    with pytest.raises(InputError, match="exactly one record of each context, got 0"):
        human_statistics(data)
