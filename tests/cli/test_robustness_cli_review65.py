"""Review 65: ``robustness certify`` with a damaged model.json says so in one line, exit 2."""

import json

import pytest

from cli_helpers import one_line
from trustlab.robustness import digits_model, make_cost_matrix, save_base_model


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    costs = make_cost_matrix(10, {3: [8]}).tolist()
    path = tmp_path_factory.mktemp("model")
    return save_base_model(digits_model(hidden=4), path, sigma=0.25, cost_matrix=costs)


@pytest.mark.parametrize(
    ("key", "value", "options"),
    [
        ("sigma", "abc", []),
        ("sigma", "abc", ["--sigma", "0.5"]),
        ("cost_matrix", "x", []),
        ("cost_matrix", [[0, 1, 2], [3]], []),
        ("cost_matrix", [[0, 1, 2], [3]], ["--harmful", "3:5"]),
    ],
)
def test_a_damaged_model_json_names_model(run, folder, tmp_path, key, value, options):
    # was 'trustlab: unexpected failure: ValueError: could not convert string to float', exit 1
    damaged = tmp_path / "m"
    damaged.mkdir()
    (damaged / "model.pt").write_bytes((folder / "model.pt").read_bytes())
    description = json.loads((folder / "model.json").read_text())
    description[key] = value
    (damaged / "model.json").write_text(json.dumps(description))
    code, _, err = run("robustness", "certify", "--model", damaged, "--limit", "1", *options)
    assert code == 2, err
    line = one_line(err)
    assert line.startswith(f"trustlab: error: --model: {key}: expected "), line
    assert "model.json" in line


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]])
def test_a_folder_where_the_checkpoint_goes_is_refused(run, folder, tmp_path, overwrite):
    # was 'trustlab: unexpected failure: IsADirectoryError', exit 1
    (tmp_path / "out" / "checkpoint.jsonl").mkdir(parents=True)
    args = ("--model", folder, "--limit", "1", "--out", tmp_path / "out", *overwrite)
    code, _, err = run("robustness", "certify", *args)
    assert code == 2, err
    assert one_line(err).startswith("trustlab: error: --out: expected a folder whose checkpoint")
    assert (tmp_path / "out" / "checkpoint.jsonl").is_dir()


def test_a_binary_checkpoint_is_refused_as_another_file(run, folder, tmp_path):
    # was 'trustlab: unexpected failure: UnicodeDecodeError', exit 1
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "checkpoint.jsonl").write_bytes(b"\xff\xfe\x00garbage\n")
    code, _, err = run("robustness", "certify", "--model", folder, "--limit", "1",
                       "--out", tmp_path / "out")  # fmt: skip
    assert code == 2, err
    assert "certification checkpoint" in one_line(err) and "--overwrite" in one_line(err)
