"""A saved model's description file that is a symbolic link stays a link, and its target gets
the new description (diff review 67 H of a1eaf907).

Since review 65, write_atomic writes through a link (the link stays, its target is updated), and
a1eaf907 made trustlab._results.replace_saved do so for the array files. Its descriptions were
still removed by name first: measured on c5786d74, a ``model.json`` linked to
``store/model.json`` came out of write_model_folder (and every replace_saved saver) as a plain
file, the link gone, and ``store/model.json`` still held the earlier model's description. Now
the link's target is removed (the link stays, dangling: nothing loads if stopped there) and the
new description is written through the link.
"""

from __future__ import annotations

import os

import pytest

from interrupted_saves import stopped_at
from trustlab import _results as results
from trustlab.errors import TrustlabError


def _linked(tmp_path, name, text):
    (tmp_path / "store").mkdir()
    (tmp_path / "m").mkdir()
    target = tmp_path / "store" / name
    target.write_text(text)
    try:
        os.symlink(target, tmp_path / "m" / name)
    except (OSError, NotImplementedError):  # pragma: no cover (no symlinks here)
        pytest.skip("symbolic links are not available")
    return tmp_path / "m", target


def test_replace_saved_writes_a_linked_description_through(tmp_path):
    folder, target = _linked(tmp_path, "m.json", "old")
    written = results.replace_saved(folder, {"a.bin": b"A"}, {"m.json": "new"})
    assert [p.name for p in written] == ["a.bin", "m.json"]
    assert (folder / "m.json").is_symlink() and os.readlink(folder / "m.json") == str(target)
    assert target.read_text() == "new"  # was: 'old', the link replaced by a plain file
    assert sorted(p.name for p in tmp_path.joinpath("store").iterdir()) == ["m.json"]


def test_a_model_folder_keeps_its_linked_model_json(tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("safetensors")
    from trustlab._model_files import read_model_folder, write_model_folder

    folder, target = _linked(tmp_path, "model.json", '{"format": "t", "k": 0}\n')
    net = torch.nn.Linear(2, 1)
    write_model_folder(folder, {"format": "t", "k": 1}, {"n": net})
    assert (folder / "model.json").is_symlink()
    meta, states = read_model_folder(folder, "t", "the test")
    assert meta["k"] == 1 and torch.equal(states["n"]["weight"], net.weight.detach())
    # stopped before the description: the earlier one is gone (not beside the new weights), the
    # link dangles, and the folder is no model; a save that completes writes through it again
    with stopped_at(results, "model.json"):
        write_model_folder(folder, {"format": "t", "k": 2}, {"n": torch.nn.Linear(2, 1)})
    assert (folder / "model.json").is_symlink() and not target.exists()
    with pytest.raises(TrustlabError):
        read_model_folder(folder, "t", "the test")
    write_model_folder(folder, {"format": "t", "k": 3}, {"n": net})
    assert (folder / "model.json").is_symlink()
    assert read_model_folder(folder, "t", "the test")[0]["k"] == 3


def test_an_unlinked_description_and_a_link_into_no_folder_are_replaced(tmp_path):
    results.replace_saved(tmp_path, {"a.bin": b"A"}, {"m.json": "old"})
    results.replace_saved(tmp_path, {"a.bin": b"B"}, {"m.json": "new"})
    assert (tmp_path / "m.json").read_text() == "new"
    (tmp_path / "m.json").unlink()
    os.symlink(tmp_path / "gone" / "m.json", tmp_path / "m.json")  # nothing there to update
    results.replace_saved(tmp_path, {"a.bin": b"C"}, {"m.json": "newer"})
    assert not (tmp_path / "m.json").is_symlink() and (tmp_path / "m.json").read_text() == "newer"
