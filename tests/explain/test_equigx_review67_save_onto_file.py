"""TensorFieldNetwork.save to a path that is a file is refused in words (review 67).

Measured on 1b2aaee5: ``net.save(file)`` stopped on ``FileExistsError: [Errno 17] File exists``
and ``net.save(file / "below")`` on ``NotADirectoryError``, raw errors from ``Path.mkdir``. Now
an InputError naming ``path``; the file is left as it was.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("e3nn")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.equigx.model import TensorFieldNetwork  # noqa: E402


def test_saving_onto_a_file_is_refused(tmp_path):
    net = TensorFieldNetwork(mul=2, l_max=1)
    file = tmp_path / "net"
    file.write_text("keep me")
    for target in (file, file / "below"):
        with pytest.raises(InputError, match=r"^path: expected a directory") as info:
            net.save(target)
        assert info.value.argument == "path"
    assert file.read_text() == "keep me"
