"""An empty record list is named as empty: the message said "got 'list'" for an empty list
(a list is what it asks for), so the file looked well-formed (review 55)."""

from __future__ import annotations

import json

import pytest

from trustlab.errors import InputError
from trustlab.safety.context import load_casebench


def test_an_empty_file_is_said_to_be_empty(tmp_path):
    path = tmp_path / "empty.json"
    path.write_text(json.dumps([]))
    with pytest.raises(InputError, match="non-empty JSON list of records, got an empty list$"):
        load_casebench(path)
    with pytest.raises(InputError, match="got an empty list$"):
        load_casebench([])


def test_another_json_value_is_named_by_its_type(tmp_path):
    path = tmp_path / "object.json"
    path.write_text(json.dumps({"records": []}))
    with pytest.raises(InputError, match="non-empty JSON list of records, got 'dict'$"):
        load_casebench(path)
