"""``trustlab robustness train/certify``: digits, CSV and NPZ data, cost matrices, --json and
--out, resuming from the checkpoint, one-line errors with exit 2."""

import json
import re

import numpy as np
import pandas as pd
import pytest
import torch
from cli_helpers import one_line
from typer.testing import CliRunner

from trustlab.cli import robustness
from trustlab.robustness import (
    SmoothedClassifier,
    certify_dataset,
    load_base_model,
    load_digits_split,
    make_cost_matrix,
)

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def costs_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("costs") / "costs.csv"
    costs = make_cost_matrix(10, {3: [8]})
    pd.DataFrame(costs).to_csv(path, header=False, index=False)
    return path


@pytest.fixture(scope="module")
def trained(tmp_path_factory, costs_csv):
    """A small model trained through the CLI (module scope: trained once)."""
    out = tmp_path_factory.mktemp("model")
    result = CliRunner().invoke(
        robustness.app,
        ["train", "--data", "digits", "--cost-matrix", str(costs_csv), "--max-epochs", "2",
         "--hidden", "16", "--sigma", "0.25", "--out", str(out), "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return out, json.loads(result.stdout)


def test_train_writes_a_loadable_model_and_its_description(trained):
    path, summary = trained
    assert {p.name for p in path.iterdir()} == {"model.pt", "model.json"}
    model = load_base_model(path)
    description = model.trustlab_description
    assert description["method"] == "margin-cs" and description["sigma"] == 0.25
    assert summary["method"] == "margin-cs" and len(summary["history"]) == 2
    assert model(torch.zeros(1, 64)).shape == (1, 10)


def test_certify_matches_the_library_and_writes_its_files(run, trained, costs_csv, tmp_path):
    path, _ = trained
    out = tmp_path / "cert"
    args = ["robustness", "certify", "--model", path, "--data", "digits", "--cost-matrix",
            costs_csv, "--sigma", "0.25", "--n", "500", "--limit", "30", "--seed", "4"]  # fmt: skip
    code, stdout, _ = run(*args, "--out", out, "--json")
    assert code == 0
    data = json.loads(stdout)
    model = load_base_model(path)
    X, y = load_digits_split("test")
    expected = certify_dataset(
        SmoothedClassifier(model, 0.25, 10), X[:30], y[:30], n=500,
        cost_matrix=make_cost_matrix(10, {3: [8]}), random_state=4,
    )  # fmt: skip
    assert data["curves"] == json.loads(json.dumps(expected.to_dict()["curves"]))
    assert {p.name for p in out.iterdir()} >= {
        "result.json", "certificates.csv", "certified_accuracy.png", "checkpoint.jsonl",
    }  # fmt: skip
    assert len(pd.read_csv(out / "certificates.csv")) == 30
    # A rerun resumes from the finished checkpoint: the same result, in text form.
    code, stdout, _ = run(*args, "--out", out)
    assert code == 0 and "Rob_cs" in stdout


def test_certify_reads_csv_and_npz_data_and_harmful_pairs(run, trained, tmp_path):
    path, _ = trained
    X, y = load_digits_split("test")
    table = pd.DataFrame(X[:12], columns=[f"p{i}" for i in range(64)]).assign(digit=y[:12])
    table.to_csv(tmp_path / "data.csv", index=False)
    np.savez(tmp_path / "data.npz", X=X[:12], y=y[:12])
    outputs = []
    for data, extra in [("data.csv", ["--label", "digit"]), ("data.npz", [])]:
        code, stdout, _ = run(
            "robustness", "certify", "--model", path, "--data", tmp_path / data, *extra,
            "--harmful", "3:8", "--n", "300", "--json",
        )  # fmt: skip
        assert code == 0
        outputs.append(json.loads(stdout))
    assert outputs[0] == outputs[1]
    assert outputs[0]["num_points"] == 12 and outputs[0]["cost_matrix"][3][8] == 1.0


@pytest.mark.parametrize(
    "content, message",
    [
        ("0,1\n1,0\n", r"--cost-matrix: expected a \(10, 10\) matrix"),
        ("\n".join(",".join("-1" if (i, j) == (3, 8) else "0" for j in range(10)) for i in range(10)),
         r"--cost-matrix: expected non-negative costs, got -1 at index \(3, 8\)"),
        ("\n".join(",".join("1" if i == j else "0" for j in range(10)) for i in range(10)),
         r"--cost-matrix: expected 0 on the diagonal .*, got 1 at index \(0, 0\)"),
        ("a,b\nc,d\n", "--cost-matrix: expected a square table of numbers"),
    ],
)  # fmt: skip
def test_bad_cost_matrix_is_one_line_with_exit_2(run, trained, tmp_path, content, message):
    path, _ = trained
    costs = tmp_path / "costs.csv"
    costs.write_text(content)
    code, _, err = run("robustness", "certify", "--model", path, "--cost-matrix", costs,
                       "--n", "100", "--limit", "2")  # fmt: skip
    assert code == 2
    assert re.search(message, one_line(err))


@pytest.mark.parametrize(
    "args, message",
    [
        (["--sigma", "0"], "sigma"),
        (["--n0", "200", "--n", "100"], "n0: expected at most n = 100"),
        (["--harmful", "3-8"], "--harmful"),
        (["--data", "nowhere.csv"], "--data"),
    ],
)
def test_bad_certify_input_is_one_line_with_exit_2(run, trained, args, message):
    path, _ = trained
    code, _, err = run("robustness", "certify", "--model", path, "--limit", "2", *args)
    assert code == 2
    assert message in one_line(err)


def test_missing_model_file_is_one_line_with_exit_2(run, tmp_path):
    code, _, err = run("robustness", "certify", "--model", tmp_path / "none.pt")
    assert code == 2 and "model" in one_line(err)
