"""Duplicated records (review 55).

A set whose queries each hold two records of the same intended context has no query with exactly
one record of each context: the refusal said "a record of each context, got 0", which every
query has. An exact duplicate (same query, context and intended context; a file concatenated
twice) is refused when the data is loaded, naming the records: it was counted twice in every
metric and human_statistics called it a "record without a pair"."""

from __future__ import annotations

import copy
import json

import pytest

from trustlab.errors import InputError
from trustlab.safety.context import human_statistics, load_casebench, synthetic_casebench


def test_two_records_of_each_context_are_refused_naming_the_one_to_one_pairing():
    records = synthetic_casebench().records()[:4]
    again = copy.deepcopy(records)
    for record in again:  # another context of the same intention: not an exact duplicate
        record["context"]["sender"]["platform_type"] += " (again)"
    data = load_casebench(records + again)
    with pytest.raises(InputError, match="exactly one record of each context, got 0"):
        human_statistics(data)


def test_exact_duplicate_records_are_refused_at_load_naming_them(tmp_path):
    records = synthetic_casebench().records()
    with pytest.raises(
        InputError, match=r"record 60 repeats record 0; record 61 repeats record 1$"
    ):
        load_casebench(records + records[:2])
    path = tmp_path / "twice.json"
    path.write_text(json.dumps(records[:4] * 2))
    with pytest.raises(InputError, match=r"^path: expected each record once .*4 duplicate"):
        load_casebench(path)
