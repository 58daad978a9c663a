"""human_statistics' errors about its dataset name ``dataset`` (review 65).

human_statistics(5) said 'path: expected a non-empty JSON list of records, got 'int'' and a
missing file 'path: expected an existing file': the loader's argument, which the caller never
passed. The CLI (stats DATA) names DATA as before.
"""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.safety.context import human_statistics, synthetic_casebench


@pytest.mark.parametrize(
    "dataset",
    [5, {"a": 1}, "no-such-casebench.json", [[1]], synthetic_casebench().records()[:1] * 2],
)
def test_errors_name_dataset(dataset):
    with pytest.raises(InputError, match=r"^dataset: ") as caught:
        human_statistics(dataset, n_bootstrap=10)
    assert caught.value.argument == "dataset"
