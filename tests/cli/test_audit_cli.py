"""``trustlab audit``: files written, --json output, one-line errors with exit 2."""

import json
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
    assert (received["test_size"], received["random_state"]) == (0.5, 0)
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
