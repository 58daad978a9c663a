"""An empty or cut-short .npy/.npz is a file that cannot be read, not a Ctrl-C: numpy raises
EOFError on it, and click reads any EOFError as Ctrl-D ('trustlab: interrupted', exit 130)."""

import numpy as np
import pytest

from cli_helpers import one_line
from cli_helpers import run_main as run


def test_an_eof_error_escaping_a_command_is_a_failure_not_an_interruption(capsys, monkeypatch):
    import trustlab.cli.data as data_cli

    def cut_short():
        raise EOFError("No data left in file")

    monkeypatch.setattr(data_cli, "list_datasets", cut_short)
    code, _, err = run(["data", "list"], capsys)
    assert code == 1
    assert one_line(err) == "trustlab: failed: a file was empty or cut short: No data left in file"


def test_ctrl_c_is_still_an_interruption(capsys, monkeypatch):
    import trustlab.cli.data as data_cli

    def interrupt():
        raise KeyboardInterrupt

    monkeypatch.setattr(data_cli, "list_datasets", interrupt)
    code, _, err = run(["data", "list"], capsys)
    assert code == 130
    assert one_line(err) == "trustlab: interrupted"


@pytest.mark.parametrize("content", [b"", b"PK\x03\x04broken"], ids=["empty", "broken-zip"])
def test_robustness_data_npz_that_cannot_be_read_is_bad_input(capsys, tmp_path, content):
    path = tmp_path / "d.npz"
    path.write_bytes(content)
    code, _, err = run(
        ["robustness", "train", "--data", str(path), "--out", str(tmp_path / "m")], capsys
    )
    assert code == 2
    line = one_line(err)
    assert line.startswith(f"trustlab: error: --data: could not read {path}: ")
    if not content:
        assert line.endswith("the file is empty or cut short")
    assert not (tmp_path / "m").exists()


def test_privacy_deltas_empty_npy_is_bad_input(capsys, tmp_path):
    path = tmp_path / "deltas.npy"
    path.write_bytes(b"")
    code, _, err = run(
        ["privacy", "dsi", "--deltas", str(path), "--epsilon", "1", "--delta", "1e-5"], capsys
    )
    assert code == 2
    assert one_line(err) == (
        f"trustlab: error: --deltas: could not read {path}: the file is empty or cut short"
    )


def test_regions_images_empty_npy_is_bad_input(tmp_path):
    from trustlab.cli.explain_regions import _read_images
    from trustlab.errors import InputError

    path = tmp_path / "images.npy"
    path.write_bytes(b"")
    with pytest.raises(InputError, match="the file is empty or cut short") as caught:
        _read_images(path)
    assert caught.value.argument == "--images"
    np.save(tmp_path / "ok.npy", np.zeros((3, 4, 4)))
    assert _read_images(tmp_path / "ok.npy").shape == (1, 3, 4, 4)
