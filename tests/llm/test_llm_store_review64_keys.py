"""Review 64: ResultStore wrote a dict whose keys become one JSON text ({1: "a", "1": "b"}) as
JSON with "1" twice and read it back as {"1": "b"}: one result silently lost (put and map). Such
a value is now refused with an InputError naming the key; distinct keys still round-trip."""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.llm import ResultStore


@pytest.mark.parametrize("value", [{1: "a", "1": "b"}, {"x": [{True: 1, "true": 2}]}])
def test_keys_that_become_one_text_are_refused(tmp_path, value):
    with ResultStore(tmp_path / "s.db") as store:
        with pytest.raises(InputError, match="value for run 'r', item 0: .*same JSON text"):
            store.put("r", 0, value)
        with pytest.raises(InputError, match="same JSON text"):
            store.map("r", [0], lambda key: value)
        assert not store.has("r", 0)
        store.put("r", 1, {1: "a", "b": {2: None}})
        assert store.get("r", 1) == {"1": "a", "b": {"2": None}}
