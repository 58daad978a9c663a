"""Review 64: a model file xgboost cannot parse is refused in one line.

``trustlab explain fastpd --model bad.json`` (a file that is not xgboost's JSON) printed 15 lines:
xgboost's message carries the JSON excerpt and a C++ stack trace ("Stack trace: [bt] (0) ...
libxgboost.so"), which read_or_raise copied whole into its "one clear InputError line". Now only
the message's first line is kept.
"""

import pytest

from trustlab.cli.explain import load_tree_model
from trustlab.errors import InputError


def test_unparsable_xgboost_file_is_one_line(tmp_path):
    pytest.importorskip("xgboost")
    path = tmp_path / "bad.json"
    path.write_text("{not json")
    with pytest.raises(InputError) as caught:
        load_tree_model(path)
    message = str(caught.value)
    assert message.startswith(
        "--model: could not read bad.json as an xgboost model (XGBoostError: "
    )
    assert "\n" not in message and "Stack trace" not in message
