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
