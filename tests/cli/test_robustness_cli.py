"""``trustlab robustness train/certify``: digits, CSV and NPZ data, cost matrices, --json and
--out, resuming from the checkpoint, one-line errors with exit 2."""

import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from typer.testing import CliRunner

from cli_helpers import one_line, with_options
from trustlab.cli import robustness
from trustlab.errors import InputError
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


@pytest.mark.parametrize(
    ("header", "index"),
    [(False, False), (True, False), (True, True), (False, True)],
    ids=["bare", "header-row", "header-and-index (pandas' default)", "index-column"],
)
def test_the_cost_matrix_reads_in_every_documented_layout(tmp_path, header, index):
    """No header; a header row of class indices; a header row and an index column (what
    ``pd.DataFrame(C).to_csv`` writes: (K+1) x (K+1), so square, with an empty corner); an index
    column alone."""
    costs = make_cost_matrix(4, {1: [2, 3]}) * np.arange(1, 5)[None, :]
    path = tmp_path / "c.csv"
    pd.DataFrame(costs).to_csv(path, header=header, index=index)
    np.testing.assert_array_equal(robustness.read_cost_matrix(path), costs)


@pytest.mark.parametrize(
    ("header", "index"), [(True, True), (True, False), (False, True)],
    ids=["header-and-index", "header-row", "index-column"],
)  # fmt: skip
def test_the_cost_matrix_is_placed_by_its_labels_in_any_order(tmp_path, header, index):
    """Labels in another order than 0..K-1 (``to_csv`` of a reordered frame) place the costs by
    label: C[3, 8] stays C[3, 8] (they were read by position, so permuted)."""
    order = [3, 8, 0, 1, 2, 4, 5, 6, 7, 9]
    costs = make_cost_matrix(10, {3: [8], 1: [0]}) * np.arange(1, 11)[:, None]
    frame = pd.DataFrame(costs, index=range(10), columns=range(10))
    frame = frame.loc[order if index else frame.index, order if header else frame.columns]
    path = tmp_path / "c.csv"
    frame.to_csv(path, header=header, index=index)
    np.testing.assert_array_equal(robustness.read_cost_matrix(path), costs)


@pytest.mark.parametrize(
    "content, message",
    [
        ("0,2\n0,1\n1,0\n", r"expected a header row of the class indices 0..1 .*'0', '2'"),
        (",0,0\n0,0,1\n1,1,0\n", r"expected a header row of the class indices 0..1"),
        (",0,1\n0,0,1\n0,1,0\n", r"expected a first column of the class indices 0..1"),
        ("0,0,1\n0,0,1\n1,0,0\n", r"could be either .*leave that cell empty"),
        ("x,0,1\n0,0,1\n1.5,1,0\n", r"expected a first column .*'0', '1.5'"),
    ],
    ids=["numbers-not-labels", "repeated-label", "repeated-index", "ambiguous", "text-corner"],
)  # fmt: skip
def test_cost_matrix_labels_that_are_not_the_classes_are_refused(tmp_path, content, message):
    """A first row that is not 0..K-1 was dropped silently; one that could be labels or costs
    is refused, not guessed."""
    path = tmp_path / "c.csv"
    path.write_text(content)
    with pytest.raises(InputError, match="^--cost-matrix: ") as caught:
        robustness.read_cost_matrix(path)
    assert re.search(message, str(caught.value))


@pytest.mark.parametrize(
    "content, line, column",
    [("0,1,\n1,0,1\n1,1,0\n", 1, 3), (",0,1,2\n0,0,1,1\n1,1,0,nan\n2,1,1,0\n", 3, 4)],
    ids=["plain", "labelled"],
)
def test_an_empty_cost_cell_is_named_not_the_shape(tmp_path, content, line, column):
    """An empty cell said "expected a full K x K table, got an array of shape (3, 3)"."""
    path = tmp_path / "c.csv"
    path.write_text(content)
    with pytest.raises(InputError, match="^--cost-matrix: ") as caught:
        robustness.read_cost_matrix(path)
    assert f"cell at line {line}, column {column}" in str(caught.value)
    assert "shape" not in str(caught.value)


def test_read_data_skips_the_index_column_pandas_writes(tmp_path):
    """DataFrame.to_csv() writes the row index under an empty header; train read it as one
    more feature (silently), certify then refused the file for its feature count."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(6, 3)), columns=["a", "b", "c"])
    frame["label"] = [0, 1, 2, 0, 1, 2]
    frame.to_csv(tmp_path / "plain.csv", index=False)
    frame.to_csv(tmp_path / "indexed.csv")
    X_plain, y_plain = robustness.read_data(str(tmp_path / "plain.csv"))
    X, y = robustness.read_data(str(tmp_path / "indexed.csv"))
    np.testing.assert_array_equal(X, X_plain)
    np.testing.assert_array_equal(y, y_plain)


def test_the_class_count_settles_a_table_that_could_have_labels(tmp_path):
    """A 3 x 3 table 0,0,1 / 0,0,1 / 1,0,0 is 3-class costs, or 2-class costs under labels: the
    model's class count (certify) or the labels' (train) says which; neither fitting is refused."""
    path = tmp_path / "c.csv"
    path.write_text("0,0,1\n0,0,1\n1,0,0\n")
    costs = robustness.read_cost_matrix(path, n_classes=3)
    np.testing.assert_array_equal(costs, [[0, 0, 1], [0, 0, 1], [1, 0, 0]])
    np.testing.assert_array_equal(robustness.read_cost_matrix(path, n_classes=2), [[0, 1], [0, 0]])
    with pytest.raises(InputError, match="could be either"):
        robustness.read_cost_matrix(path, n_classes=5)


def test_a_square_table_of_numbers_is_all_costs(tmp_path):
    """A numeric top-left cell means no labels, even when the first row is 0, 1, 2."""
    path = tmp_path / "c.csv"
    path.write_text("0,1,2\n1,0,1\n2,1,0\n")
    np.testing.assert_array_equal(
        robustness.read_cost_matrix(path), [[0, 1, 2], [1, 0, 1], [2, 1, 0]]
    )


def test_train_with_a_cost_matrix_short_of_classes_blames_the_matrix(run, tmp_path):
    """A 9 x 9 matrix for digits (classes 0..9) said "--label: expected class indices 0..8"."""
    costs = tmp_path / "c9.csv"
    pd.DataFrame(1 - np.eye(9)).to_csv(costs, header=False, index=False)
    code, _, err = run("robustness", "train", "--cost-matrix", costs, "--max-epochs", "1",
                       "--out", tmp_path / "m")  # fmt: skip
    assert code == 2
    line = one_line(err)
    assert line.startswith("trustlab: error: --cost-matrix: ") and "9 x 9" in line
    assert "K >= 10" in line and not (tmp_path / "m").exists()


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
        ("0,2\n0,1\n1,0\n", "--cost-matrix: expected a header row of the class indices 0..1"),
        # inf in the first row was taken for a class index: 'unexpected failure: OverflowError'
        ("\n".join(",".join("inf" if (i, j) == (0, 1) else "0" for j in range(10)) for i in range(10)),
         r"--cost-matrix: expected finite values, got inf at index \(0, 1\)"),
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


@pytest.mark.parametrize("command", ["train", "certify"])
def test_split_with_a_data_file_is_refused_not_ignored(run, trained, tmp_path, command):
    # --split picks a digits split; with a file it was ignored without a word
    X, y = load_digits_split("test")
    pd.DataFrame(X[:12]).assign(label=y[:12]).to_csv(tmp_path / "d.csv", index=False)
    args = ["--out", tmp_path / "m"] if command == "train" else ["--model", trained[0]]
    code, _, err = run("robustness", command, *args, "--data", tmp_path / "d.csv",
                       "--split", "test")  # fmt: skip
    assert code == 2 and not (tmp_path / "m").exists()
    assert one_line(err) == (
        f"trustlab: error: --split: applies to --data digits only, got --split test with "
        f"--data {tmp_path / 'd.csv'}"
    )


def test_missing_model_file_is_one_line_with_exit_2(run, tmp_path):
    code, _, err = run("robustness", "certify", "--model", tmp_path / "none.pt")
    assert code == 2 and "model" in one_line(err)


# Issue 18, section 4: plans and progress, what the model was trained for, reruns into --out.


@pytest.fixture
def line_progress(monkeypatch):
    """Progress lines without a terminal from the first update on (no 2 s wait)."""
    from functools import partial

    from trustlab.cli import _progress

    monkeypatch.setattr(
        _progress, "LineProgress", partial(_progress.LineProgress, delay=0.0, interval=0.0)
    )


CHEAP = ["--limit", "3", "--n0", "10", "--n", "50"]


def test_runaway_certify_is_refused_up_front_without_yes(run, trained, tmp_path):
    path, _ = trained
    out = tmp_path / "cert"
    code, _, err = run("robustness", "certify", "--model", path, "--n", "1000000000000",
                       "--limit", "1", "--out", out)  # fmt: skip
    line = one_line(err)
    assert code == 2 and line.startswith("trustlab: error: --yes: certifying 1 point x 10^12")
    assert not (out / "checkpoint.jsonl").exists()  # refused before any work


def test_certify_says_its_plan_and_logs_progress_lines_without_a_terminal(
    run, trained, line_progress
):
    path, _ = trained
    code, _, err = run("robustness", "certify", "--model", path, *CHEAP, "--json")
    assert code == 0
    assert "trustlab: certifying 3 points x 60 samples (10 + 50) at sigma 0.25" in err
    assert re.search(r"trustlab: certifying 3 points: [0-3]/3 \(\d+%\)", err), err
    assert re.search(r"trustlab: certifying 3 points: done in", err), err


def test_training_says_its_plan_and_refuses_beyond_the_bound(run, tmp_path, line_progress):
    code, _, err = run("robustness", "train", "--max-epochs", "100000000", "--out", tmp_path / "m")
    assert code == 2 and "--yes: training an mlp" in one_line(err)
    assert not (tmp_path / "m" / "model.pt").exists()


def test_model_records_what_it_was_trained_for_and_held_out_accuracy(trained):
    path, summary = trained
    description = json.loads((path / "model.json").read_text())
    assert description["sigma"] == 0.25
    assert description["cost_matrix"] == make_cost_matrix(10, {3: [8]}).tolist()
    assert description["harmful"] == [[3, 8]]
    validation = description["training"]["validation"]
    assert validation["source"] == "the digits test split" and validation["size"] == 540
    assert summary["validation"] == validation and 0 <= validation["accuracy"] <= 1


def test_training_on_a_table_holds_out_a_share_and_reports_it(run, tmp_path):
    X, y = load_digits_split("train")
    table = pd.DataFrame(X[:100], columns=[f"p{i}" for i in range(64)]).assign(label=y[:100])
    table.to_csv(tmp_path / "train.csv", index=False)
    code, stdout, _ = run("robustness", "train", "--data", tmp_path / "train.csv", "--max-epochs",
                          "1", "--hidden", "8", "--out", tmp_path / "m")  # fmt: skip
    assert code == 0
    assert re.search(
        r"held-out accuracy on 20% of the data held out \(--holdout\) \(20 points", stdout
    )
    code, _, err = run("robustness", "train", "--data", tmp_path / "train.csv", "--holdout", "0.9",
                       "--out", tmp_path / "m2")  # fmt: skip
    assert code == 2 and one_line(err).startswith("trustlab: error: --holdout:")


def test_certify_uses_what_the_model_was_trained_for_and_says_so(run, trained, costs_csv):
    path, _ = trained
    code, implicit, err = run("robustness", "certify", "--model", path, *CHEAP, "--json")
    assert code == 0
    assert "at sigma 0.25 (the model's), against harmful 3->8 (what the model was trained " in err
    code, explicit, _ = run("robustness", "certify", "--model", path / "model.pt", *CHEAP,
                            "--sigma", "0.25", "--cost-matrix", costs_csv, "--json")  # fmt: skip
    assert code == 0 and json.loads(implicit) == json.loads(explicit)
    assert json.loads(implicit)["cost_matrix"][3][8] == 1.0


def test_certify_warns_where_its_options_contradict_the_model(run, trained):
    path, _ = trained
    code, stdout, err = run("robustness", "certify", "--model", path, *CHEAP, "--sigma", "0.5",
                            "--harmful", "1:7", "--json")  # fmt: skip
    assert code == 0 and json.loads(stdout)["sigma"] == 0.5
    assert "trustlab: warning: --sigma 0.5 differs from the 0.25 the model was trained at" in err
    assert "trustlab: warning: --harmful (harmful 1->7) differs from what the model was" in err


def test_certify_resumes_from_its_checkpoint_and_says_so(run, trained, tmp_path):
    path, _ = trained
    out = tmp_path / "cert"
    args = ["robustness", "certify", "--model", path, *CHEAP, "--out", out, "--json"]
    code, first, err = run(*args)
    assert code == 0 and "resuming" not in err
    code, again, err = run(*args)
    assert code == 0 and json.loads(again) == json.loads(first)
    assert f"trustlab: resuming from {out / 'checkpoint.jsonl'}: 3 of 3 points" in err
    # A checkpoint of other settings is refused in one line; --overwrite starts afresh.
    code, _, err = run(*args, "--seed", "5")
    line = one_line(err)
    assert code == 2 and line.startswith("trustlab: error: --out:") and "--overwrite" in line
    # --overwrite with a bad option deleted the results before the option was refused
    kept = {name: (out / name).read_bytes() for name in ("checkpoint.jsonl", "result.json")}
    for bad in (["--alpha", "0.7"], ["--n0", "0"], ["--seed", "-1"]):
        code, _, err = run(*with_options(args, bad), "--overwrite")
        assert code == 2 and one_line(err).startswith(f"trustlab: error: {bad[0]}"), err
        assert {name: (out / name).read_bytes() for name in kept} == kept
    code, _, err = run(*args, "--seed", "5", "--overwrite")
    assert code == 0 and "resuming" not in err
    # Results without their checkpoint are never returned as if new.
    (out / "checkpoint.jsonl").unlink()
    code, _, err = run(*args)
    assert code == 2 and "--overwrite" in one_line(err)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        # the old checkpoint and results were deleted, then the run was refused without --yes
        (["--n", "1000000000000"], "--yes: certifying 3 points"),
        # 'unexpected failure: ValueError' with exit 1, after the old checkpoint and results went
        (["--dask-scheduler", "no-port-here"], "--dask-scheduler: expected"),
    ],
)
def test_a_refused_overwrite_keeps_the_finished_run(run, trained, tmp_path, bad, message):
    path, _ = trained
    out = tmp_path / "cert"
    args = ["robustness", "certify", "--model", path, *CHEAP, "--out", out]
    code, _, err = run(*args)
    assert code == 0, err
    kept = {name: (out / name).read_bytes() for name in ("checkpoint.jsonl", "result.json")}
    code, _, err = run(*with_options(args, bad), "--overwrite")
    assert code == 2 and one_line(err).startswith(f"trustlab: error: {message}"), err
    assert {name: (out / name).read_bytes() for name in kept} == kept
    code, _, err = run(*args)  # and it still resumes
    assert code == 0 and "resuming" in err


def test_train_refuses_an_existing_model_without_overwrite(run, trained):
    path, _ = trained
    code, _, err = run("robustness", "train", "--out", path)
    assert code == 2 and "--out" in one_line(err) and "--overwrite" in one_line(err)


def test_errors_name_options_and_csv_input_takes_an_encoding(run, trained, tmp_path):
    table = pd.DataFrame({"a": [0.1, 0.2, 0.3, 0.4, 0.5], "b": [1.0] * 5, "größe": [0.2] * 5,
                          "label": [0, 1, 0, 1, 0]})  # fmt: skip
    table.to_csv(tmp_path / "t.csv", index=False, encoding="latin-1")
    args = ["robustness", "train", "--data", tmp_path / "t.csv", "--holdout", "0", "--max-epochs",
            "1", "--out", tmp_path / "m"]  # fmt: skip
    code, _, err = run(*args)
    assert code == 2 and "--encoding" in one_line(err)
    code, _, err = run(*args, "--encoding", "latin-1", "--arch", "cnn")
    assert code == 2 and one_line(err).startswith("trustlab: error: --arch: expected 'mlp'")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing leaks to the user
        code, _, err = run(*args, "--encoding", "latin-1")
    assert code == 0, err
    X, y = load_digits_split("test")
    digits = pd.DataFrame(X[:3], columns=[f"pé{i}" for i in range(64)]).assign(label=y[:3])
    digits.to_csv(tmp_path / "d.csv", index=False, encoding="latin-1")
    code, stdout, _ = run("robustness", "certify", "--model", trained[0], "--data",
                          tmp_path / "d.csv", "--encoding", "latin-1", *CHEAP, "--json")  # fmt: skip
    assert code == 0 and json.loads(stdout)["num_points"] == 3


@pytest.mark.parametrize(
    ("args", "start"),
    [(["--hidden", "0"], "--hidden: expected"), (["--learning-rate", "-1"], "--learning-rate: "),
     (["--method", "foo"], "--method: expected"), (["--sigma", "-1"], "--sigma: expected"),
     (["--batch-size", "0"], "--batch-size: expected")],
)  # fmt: skip
def test_train_errors_name_the_options_not_python_arguments(run, tmp_path, args, start):
    code, _, err = run("robustness", "train", "--out", tmp_path / "m", *args)
    assert code == 2 and one_line(err).startswith("trustlab: error: " + start)
