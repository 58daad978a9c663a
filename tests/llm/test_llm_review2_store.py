"""Second review of ResultStore: numpy integer keys, and the order of a run's items."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.llm import ResultStore


def test_items_keep_the_order_of_first_writing_when_an_item_is_replaced(tmp_path):
    # before: {'b': 2, 'a': 3} (INSERT OR REPLACE appended the replaced row)
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.put("run", "a", 1)
        store.put("run", "b", 2)
        store.put("run", "a", 3)
        assert list(store.items("run").items()) == [("a", 3), ("b", 2)]
        assert store.get("run", "a") == 3 and store.done("run") == {"a", "b"}


def test_numpy_integer_keys_are_their_ints(tmp_path):
    # before: "item: expected a string or an integer key, got an array of shape () ..."
    with ResultStore(tmp_path / "r.sqlite") as store:
        squares = store.map("sq", np.arange(3), lambda k: k * k)
        assert squares == {0: 0, 1: 1, 2: 4}
        assert all(type(key) is int for key in squares)
        store.put("sq", np.int32(5), 25)
        assert store.get("sq", 5) == 25 and store.has("sq", np.int64(5))
        assert store.map("sq", {np.int64(1): None}, lambda _: 1 / 0) == {1: 1}  # resumed


def test_a_file_that_is_not_a_database_is_an_input_error_naming_path(tmp_path):
    # before: sqlite3.DatabaseError "file is not a database" (and a FileExistsError for a file
    # used as a folder), neither naming the argument
    data = tmp_path / "data.csv"
    data.write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match=r"^path: expected a SQLite file or a new file path"):
        ResultStore(data)
    assert data.read_text() == "a,b\n1,2\n"  # left as it was
    with pytest.raises(InputError, match=r"^path: expected a file path in a folder"):
        ResultStore(data / "results.sqlite")
