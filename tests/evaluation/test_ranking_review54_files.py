"""``evaluate rank`` with an empty or broken .npy/.npz file (review 54): numpy raises EOFError
for an empty file, which click reported as "trustlab: interrupted" with exit code 130, and a
broken .npz raised zipfile.BadZipFile ("unexpected failure", exit 1)."""

import numpy as np
import pytest

from cli_helpers import one_line, run_main


@pytest.fixture
def two_models(tmp_path):
    rng = np.random.default_rng(54)
    for name in ("a", "b"):
        np.save(tmp_path / f"{name}.npy", rng.dirichlet(np.ones(3), size=10))
    return tmp_path


@pytest.mark.parametrize(
    ("name", "content"), [("empty.npy", b""), ("empty.npz", b""), ("cut.npz", b"PK\x03\x04junk")]
)
def test_an_unreadable_prediction_file_is_one_line_and_exit_2(two_models, capsys, name, content):
    (two_models / name).write_bytes(content)
    code, _, err = run_main(
        ["evaluate", "rank", "-p", two_models / "a.npy", two_models / name], capsys
    )
    assert code == 2
    line = one_line(err)
    assert line.startswith(f"trustlab: error: --predictions: could not read {two_models / name}")
    assert "interrupted" not in err


def test_an_empty_labels_npy_is_one_line_and_exit_2(two_models, capsys):
    (two_models / "labels.npy").write_bytes(b"")
    code, _, err = run_main(
        [
            "evaluate",
            "rank",
            "-p",
            two_models / "a.npy",
            two_models / "b.npy",
            "--labels",
            two_models / "labels.npy",
        ],
        capsys,
    )
    assert code == 2
    assert one_line(err) == (
        f"trustlab: error: --labels: could not read {two_models / 'labels.npy'}: the file is "
        "empty or cut short"
    )
