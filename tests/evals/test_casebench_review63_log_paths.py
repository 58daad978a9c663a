"""casebench_outputs / casebench_scores given a path that holds no inspect log (review 63).

Before: a missing file raised FileNotFoundError, a folder ValueError ("No recorder for
location") and an output file in the authors' format (a JSON list of records, which
``trustlab safety context score`` reads) a raw pydantic ValidationError. Now each is an
InputError naming ``log``, the path and inspect's reason.
"""

from __future__ import annotations

import json

import pytest

from trustlab.errors import InputError
from trustlab.evals.casebench import casebench_outputs, casebench_scores


@pytest.mark.parametrize("kind", ["missing", "folder", "output_file"])
@pytest.mark.parametrize("reader", [casebench_outputs, casebench_scores])
def test_a_path_without_an_inspect_log_is_bad_input(tmp_path, kind, reader):
    path = tmp_path / "log.json"
    if kind == "folder":
        path = tmp_path
    elif kind == "output_file":
        path.write_text(json.dumps([{"query": "q", "safe_rate": 0.5, "judge": "safe"}]))
    with pytest.raises(InputError, match=r"^log: expected an inspect log file") as info:
        reader(path)
    assert str(path) in str(info.value)
    assert info.value.argument == "log"
