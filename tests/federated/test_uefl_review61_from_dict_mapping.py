"""Stop 61 (saestr): ``UEFLConfig.from_dict`` refuses a non-mapping naming its argument.

``from_dict('rounds=3')`` or ``from_dict(None)`` raised a raw AttributeError ("'str' object has
no attribute 'items'"); now an InputError naming ``values``, what was expected and what came.
"""

from __future__ import annotations

import types

import pytest

from trustlab.errors import InputError
from trustlab.federated import UEFLConfig


@pytest.mark.parametrize("values", ["rounds=3", None, [("rounds", 3)], 3])
def test_a_non_mapping_is_refused_naming_values(values):
    with pytest.raises(InputError, match=r"^values: expected a mapping of UEFLConfig settings, "
                       r"got ") as caught:  # fmt: skip
        UEFLConfig.from_dict(values)
    assert caught.value.argument == "values"


def test_any_mapping_is_still_read():
    assert UEFLConfig.from_dict(types.MappingProxyType({})) == UEFLConfig()
    assert UEFLConfig.from_dict({"rounds": 3}) == UEFLConfig(rounds=3)
