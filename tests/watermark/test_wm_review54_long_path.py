"""Review 54: load_watermark_dataset on a damaged folder with a long path cut its one-line error at
80 characters (InputError.bad shortens what came), so the reason (which file, what is wrong) was
lost; the error now holds the whole path and the reason."""

from __future__ import annotations

import json

import pytest

from cli_helpers import one_line, run_main
from trustlab.errors import InputError
from trustlab.watermark import load_watermark_dataset, synthesize


@pytest.fixture(scope="module")
def original(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wm_long") / "wm"
    synthesize(2, random_state=3).save(folder)
    return folder


@pytest.fixture
def saved(original, tmp_path):
    import shutil

    return shutil.copytree(original, tmp_path / ("a_folder_with_a_rather_long_name_" * 3))


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda d: (d / "arrays.npz").write_bytes(b""), "arrays.npz is empty or cut short"),
        (
            lambda d: (d / "annotations.json").write_text(json.dumps({"images": [{}, {}]})),
            "no entry",
        ),
    ],
)
def test_a_long_path_keeps_the_reason(saved, damage, reason, capsys):
    damage(saved)
    with pytest.raises(InputError, match="^path: expected a readable dataset folder") as info:
        load_watermark_dataset(saved)
    message = str(info.value)
    assert str(saved) in message and reason in message and "..." not in message
    code, _, err = run_main(["watermark", "export", "--data", saved, "--out",
                             saved.parent / "x"], capsys)  # fmt: skip
    assert code == 2
    line = one_line(err)
    assert line.startswith("trustlab: error: --data: expected a readable dataset folder")
    assert str(saved) in line and reason in line
