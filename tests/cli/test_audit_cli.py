"""``trustlab audit``: files written, --json output, one-line errors with exit 2."""

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cli_helpers import one_line
from cli_helpers import run_main as run


@pytest.fixture(scope="module")
def scored_csv(tmp_path_factory):
    rng = np.random.default_rng(1)
    n = 200
    y = rng.choice(["a", "b", "c"], size=n)
    group = rng.choice(["g1", "g2", "g3"], size=n)
    pred = np.where(rng.random(n) < 0.7, y, rng.choice(["a", "b", "c"], size=n))
    path = tmp_path_factory.mktemp("cli") / "scored.csv"
    pd.DataFrame({"age": rng.integers(18, 80, n), "y": y, "g": group, "yhat": pred}).to_csv(
        path, index=False
    )
    return path


def test_audit_with_predictions_exits_0_and_writes_both_files(scored_csv, tmp_path, capsys):
    out_dir = tmp_path / ("a-folder-name-long-enough-that-a-terminal-would-wrap-its-path-" * 2)
    args = ["audit", "--data", str(scored_csv), "--label", "y", "--group", "g", "--pred", "yhat"]
    code, out, _ = run([*args, "--out", str(out_dir)], capsys)
    assert code == 0
    assert (out_dir / "report.html").is_file() and (out_dir / "report.json").is_file()
    assert str(out_dir / "report.html") in out and "yhat" in out


def test_audit_json_output_parses_and_names_the_files(scored_csv, tmp_path, capsys):
    args = ["audit", "--data", str(scored_csv), "--label", "y", "--group", "g", "--pred", "yhat"]
    code, out, _ = run([*args, "--out", str(tmp_path), "--json"], capsys)
    assert code == 0
    result = json.loads(out)
    assert Path(result["html_path"]) == tmp_path / "report.html"
    assert json.loads(Path(result["json_path"]).read_text())["complete"] is True
    headline = result["headline"]["yhat"]
    assert 0 <= headline["dcp_lower"] <= headline["dcp_upper"] <= 1
    statuses = {s["id"]: s["status"] for s in result["sections"]}
    assert statuses["overview"] == statuses["fairness"] == "ok"
    assert set(statuses.values()) == {"ok"}


def test_audit_without_options_audits_the_bundled_default(monkeypatch, capsys):
    import trustlab.audit

    received = {}

    class Done:
        def summary(self):
            return "done"

    def fake_run_audit(data, **kwargs):
        received.update(kwargs, data=data)
        kwargs["progress"]("step", 1, 2)  # the Rich progress bar accepts updates
        return Done()

    monkeypatch.setattr(trustlab.audit, "run_audit", fake_run_audit)
    code, out, _ = run(["audit"], capsys)
    assert code == 0 and out.strip() == "done"
    assert received["data"] is None and received["out"] == Path("out")
    assert (received["test_size"], received["random_state"]) == (None, 0)
    assert received["pred"] is None and received["model"] is None


def test_audit_missing_column_exits_2_with_one_line(scored_csv, tmp_path, capsys):
    args = ["audit", "--data", str(scored_csv), "--label", "nope", "--group", "g"]
    code, _, err = run([*args, "--out", str(tmp_path)], capsys)
    assert code == 2
    assert "trustlab: error: --label: expected a column of the data, got 'nope'" in one_line(err)


@pytest.mark.parametrize("name", ["absent.csv", "data.xlsx"])
def test_audit_bad_file_exits_2_with_one_line(tmp_path, capsys, name):
    if name.endswith(".xlsx"):
        (tmp_path / name).write_bytes(b"PK")
    args = ["audit", "--data", str(tmp_path / name), "--label", "y", "--group", "g"]
    code, _, err = run([*args, "--out", str(tmp_path)], capsys)
    assert code == 2
    assert one_line(err).startswith("trustlab: error: --data: expected")


def test_audit_pickle_model_needs_trust_pickle(scored_csv, tmp_path, capsys):
    import joblib
    from sklearn.dummy import DummyClassifier

    joblib.dump(DummyClassifier().fit([[0], [1]], ["a", "b"]), tmp_path / "m.pkl")
    args = ["audit", "--data", str(scored_csv), "--label", "y", "--group", "g"]
    code, _, err = run([*args, "--model", str(tmp_path / "m.pkl"), "--out", str(tmp_path)], capsys)
    assert code == 2
    assert "--trust-pickle" in one_line(err)


def test_audit_json_stays_parseable_in_a_real_process(scored_csv, tmp_path):
    """Native solvers may print to file descriptor 1; stdout must still hold only the JSON."""
    import subprocess
    import sys

    args = ["audit", "--data", str(scored_csv), "--label", "y", "--group", "g", "--pred", "yhat"]
    command = [sys.executable, "-m", "trustlab.cli.main", *args, "--out", "out", "--json"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert Path(json.loads(done.stdout)["html_path"]) == Path("out") / "report.html"
    assert (tmp_path / "out" / "report.html").is_file()


# --- #18: saved models and predictions, --out re-runs, option names, --encoding, progress -----

PRED_ARGS = ["--label", "y", "--group", "g", "--pred", "yhat"]


def test_audit_rerun_into_the_same_out_is_refused_unless_overwrite(scored_csv, tmp_path, capsys):
    args = ["audit", "--data", scored_csv, *PRED_ARGS, "--out", tmp_path]
    assert run(args, capsys)[0] == 0
    first = (tmp_path / "report.json").read_text()
    code, out, err = run(args, capsys)
    assert code == 2 and out == ""
    line = one_line(err)
    assert line.startswith(f"trustlab: error: --out: {tmp_path} already holds an audit")
    assert line.endswith(
        "pass --overwrite (overwrite=True in Python) to replace it, or choose another directory"
    )
    assert (tmp_path / "report.json").read_text() == first  # untouched
    code, _, err = run([*args, "--overwrite", "--seed", "7"], capsys)
    assert code == 0
    assert f"trustlab: replacing the earlier audit in {tmp_path} (report.json of scored.csv" in err
    assert json.loads((tmp_path / "report.json").read_text())["meta"]["random_state"] == 7


def test_audit_saves_models_and_predictions_and_lists_them(scored_csv, tmp_path, capsys):
    from trustlab.audit.models import ZOO_NAMES, load_classifier

    args = ["audit", "--data", scored_csv, "--label", "y", "--group", "g", "--out", tmp_path]
    code, out, _ = run([*args, "--json"], capsys)
    assert code == 0
    result = json.loads(out)
    assert result["predictions_path"] == str(tmp_path / "predictions.csv")
    assert set(result["model_paths"]) == set(ZOO_NAMES)
    saved = pd.read_csv(result["predictions_path"])
    data = pd.read_csv(scored_csv)
    for name, path in result["model_paths"].items():
        rows = data.loc[saved["row"]].drop(columns=["y", "g"])  # the features
        assert load_classifier(path).predict(rows).tolist() == saved[name].tolist()


@pytest.mark.parametrize(
    ("extra", "start"),
    [
        (["--test-size", "1.5"], "--test-size: expected"),
        (["--seed", "-1"], "--seed: expected a non-negative integer seed"),
        (["--group", "y"], "--group: expected a column other than the label column"),
        (["--encoding", "klingon"], "--encoding: expected a text encoding"),
        (["--pred", "age"], "--pred: expected predictions of the same kind as the labels"),
        (["--model", "MODEL"], "--model: expected predictions of the same kind as the labels"),
        (["--out", "FILE"], "--out: expected a directory that can be created"),
    ],
)
def test_audit_errors_name_the_cli_options(scored_csv, tmp_path, capsys, extra, start):
    import skops.io
    from sklearn.dummy import DummyClassifier

    skops.io.dump(DummyClassifier().fit([[0], [1]], [0, 1]), tmp_path / "ints.skops")
    (tmp_path / "file").write_text("not a directory")
    where = {"MODEL": tmp_path / "ints.skops", "FILE": tmp_path / "file" / "out"}
    extra = [where.get(x, x) for x in extra]
    # an option in extra replaces the default one (an option given twice is refused: 74879d5)
    defaults = {"--group": "g", "--out": tmp_path / "out"}
    args = ["audit", "--data", scored_csv, "--label", "y"]
    args += [x for k, v in defaults.items() if k not in extra for x in (k, v)]
    code, _, err = run([*args, *extra], capsys)
    assert code == 2
    assert one_line(err).startswith(f"trustlab: error: {start}")
    assert not (tmp_path / "out").exists()  # bad input leaves no empty folder behind


@pytest.mark.parametrize(
    ("extra", "start"),
    [
        (["--label", "y", "--pred", "score"], "--pred: expected predicted class labels"),
        (["--label", "level"], "--label: expected class labels"),
        (["--label", "y", "--seed", "5000000000"], "--seed: expected an integer in [0, 2**32-1]"),
        (["--label", "y", "--participation", "NOPE"], "--participation: expected a readable"),
        (  # a readable file that is no answers file: named by the option, with its file name
            ["--label", "y", "--participation", "BADYAML"],
            "--participation (bad.yaml): expected a file valid against answers.schema.json",
        ),
        (
            ["--label", "y", "--model", "CSV"],
            "--model: expected a .skops file (or .pkl, .pickle, .joblib with --trust-pickle",
        ),
    ],
)
def test_audit_refuses_inputs_that_are_not_what_it_audits(tmp_path, capsys, extra, start):
    rng = np.random.default_rng(0)
    level = rng.normal(size=200)
    table = pd.DataFrame(
        {
            "x": rng.normal(size=200),
            "level": level,  # continuous: not a class label
            "g": rng.choice(["a", "b"], 200),
            "y": (level > 0).astype(int),
            "score": rng.random(200),  # a probability: not a predicted label
        }
    )
    table.to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "bad.yaml").write_text("kind: participation-answers\nfoo: 1\n", encoding="utf-8")
    where = {
        "NOPE": tmp_path / "nope.yaml",
        "CSV": tmp_path / "t.csv",
        "BADYAML": tmp_path / "bad.yaml",
    }
    extra = [where.get(x, x) for x in extra]
    args = ["audit", "--data", tmp_path / "t.csv", "--group", "g", "--out", tmp_path / "out"]
    code, _, err = run([*args, *extra], capsys)
    assert code == 2
    assert one_line(err).startswith(f"trustlab: error: {start}")
    assert not (tmp_path / "out").exists()


def test_audit_reads_a_csv_in_the_given_encoding(tmp_path, capsys):
    rng = np.random.default_rng(0)
    y = rng.choice(["oui", "non"], size=120)
    table = pd.DataFrame({"y": y, "g": rng.choice(["Zürich", "Genève"], size=120), "yhat": y})
    table.to_csv(tmp_path / "latin1.csv", index=False, encoding="latin-1")
    args = ["audit", "--data", tmp_path / "latin1.csv", *PRED_ARGS]
    code, _, err = run([*args, "--out", tmp_path / "a"], capsys)
    assert code == 2 and "--encoding latin-1" in one_line(err)
    code, out, _ = run([*args, "--out", tmp_path / "b", "--encoding", "latin-1", "--json"], capsys)
    assert code == 0
    saved = pd.read_csv(json.loads(out)["predictions_path"])
    assert set(saved["g"]) == {"Zürich", "Genève"}


def test_audit_says_what_it_does_and_logs_progress_without_a_terminal(
    scored_csv, tmp_path, capsys, monkeypatch
):
    from trustlab.cli._progress import LineProgress

    # lines from the start (not after 2 s) so that a quick test sees them
    monkeypatch.setattr(LineProgress.__init__, "__kwdefaults__", {"delay": 0.0, "interval": 0.5})
    args = ["audit", "--data", scored_csv, *PRED_ARGS, "--out", tmp_path]
    code, _, err = run(args, capsys)
    assert code == 0
    lines = err.splitlines()
    # only the sections an audit of given predictions builds (no model: no fastpd, no training
    # rows: no anova_tpnn, one model: no ranking)
    plan = (
        "trustlab: auditing scored.csv: the predictions in yhat: the report (overview, fairness) "
        "on 200 rows"
    )
    assert lines.count(plan) == 1
    assert lines.index(plan) < min(i for i, line in enumerate(lines) if "section:" in line)
    steps = [line for line in lines[:-1] if line.startswith("trustlab: audit: ")]
    assert steps and all(re.search(r": \d+/5 \(\d+%\), ", line) for line in steps)
    assert any("audit: section: fairness: " in line for line in steps)
    assert re.fullmatch(r"trustlab: audit: writing the report: done in .*", lines[-1])


def test_audit_beyond_the_row_limit_needs_yes(scored_csv, tmp_path, capsys, monkeypatch):
    import trustlab.cli.audit as audit_cli

    monkeypatch.setattr(audit_cli, "ROW_LIMIT", 100)
    args = ["audit", "--data", scored_csv, *PRED_ARGS, "--out", tmp_path]
    code, _, err = run(args, capsys)
    assert code == 2
    line = one_line(err)
    assert line.startswith("trustlab: error: --yes: auditing scored.csv: the predictions in yhat")
    assert "200 rows, beyond the 100 rows this command runs without asking" in line
    assert not (tmp_path / "report.json").exists() and not (tmp_path / "predictions.csv").exists()
    assert run([*args, "--yes"], capsys)[0] == 0
