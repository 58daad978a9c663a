"""'trustlab watermark evaluate/train --data DIR --n N' ignored --n without a word (review 64):
--data of 3 images with --n 5 evaluated the 3 (exit 0), while --kinds and --clean-fraction with
--data were refused. Now --n with --data is refused in one line (exit 2) before anything runs."""

import pytest

from cli_helpers import one_line, run_main


@pytest.fixture
def data(tmp_path):
    folder = tmp_path / "d"  # refused before it is read: an empty folder will do
    folder.mkdir()
    return folder


@pytest.mark.parametrize("command", ["evaluate", "train"])
def test_n_with_data_is_refused(data, tmp_path, capsys, command):
    out = tmp_path / "out"
    argv = ["watermark", command, "--data", str(data), "--n", "5", "--out", str(out)]
    code, _, err = run_main(argv, capsys)
    assert code == 2
    assert one_line(err) == (
        "trustlab: error: --n: expected no --n with --data (it counts generated images), got 5"
    )
    assert not out.exists()
