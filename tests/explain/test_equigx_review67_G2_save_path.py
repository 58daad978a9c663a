"""Review 67 (G2): TensorFieldNetwork.save refuses '' and a folder it may not create as the other
savers do (``output_dir(path, "path")``).

Measured on HEAD before: ``net.save('')`` wrote config.json and weights.safetensors into the
working directory (SafetyPolytope.save and write_model_folder refuse ''), and a folder that could
not be made for want of permission stopped on a raw PermissionError from ``Path.mkdir``."""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("e3nn")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.equigx.model import TensorFieldNetwork  # noqa: E402


def test_an_empty_path_is_refused_not_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    net = TensorFieldNetwork(mul=2, l_max=1)
    for empty in ("", "  "):
        with pytest.raises(InputError, match=r"^path: expected a folder path") as info:
            net.save(empty)
        assert info.value.argument == "path"
    assert not list(tmp_path.iterdir())


def test_a_folder_that_cannot_be_made_is_refused_naming_path(tmp_path):
    net = TensorFieldNetwork(mul=2, l_max=1)

    def denied(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(self))

    # the tests run as root, for whom a read-only folder is writable: mkdir is refused instead
    with mock.patch.object(Path, "mkdir", denied):
        with pytest.raises(InputError, match=r"^path: expected a directory") as info:
            net.save(tmp_path / "net")
    assert info.value.argument == "path"
    assert not (tmp_path / "net").exists()


def test_a_folder_still_saves_and_loads(tmp_path):
    net = TensorFieldNetwork(mul=2, l_max=1)
    assert net.save(str(tmp_path / "a" / "net")) == tmp_path / "a" / "net"
    assert TensorFieldNetwork.load(tmp_path / "a" / "net").config == net.config
