"""A regions checkpoint name that is a list or a dict is refused in words (review 67, J).

The sister of de398dbd (EquiGX): measured on c5786d74, the regions ``checkpoint_info(["a"])``,
``load_checkpoint({})`` and ``train_checkpoint([...], out)`` stopped on Python's
``TypeError: unhashable type: 'list'`` (the name was looked up in the dict of checkpoints), while
a string that is no checkpoint, None or 3 already gave the InputError naming ``name``.
"""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.explain.regions.checkpoints import (
    checkpoint_info,
    load_checkpoint,
    train_checkpoint,
)


@pytest.mark.parametrize("name", [["p2p_fixed"], {}, {"a": 1}, {"p2p_fixed"}])
def test_an_unhashable_regions_checkpoint_name_is_refused(name, tmp_path):
    calls = (checkpoint_info, load_checkpoint, lambda n: train_checkpoint(n, tmp_path / "out"))
    for call in calls:
        with pytest.raises(InputError, match=r"^name: expected one of \('p2p_dynamic'") as info:
            call(name)
        assert info.value.argument == "name"
    assert not (tmp_path / "out").exists()
