"""--overwrite with the default models wrote the trained random forest over out/models/
random_forest.skops when the earlier audit had not written it (its --model, a file of the
user's); docs/audit.md promises that nothing but the earlier audit's files is touched."""

import json

import pandas as pd
import pytest

from trustlab.audit import run_audit
from trustlab.audit.outputs import prepare_output
from trustlab.errors import InputError


def _earlier_audit(out, files):
    (out / "models").mkdir(parents=True)
    (out / "models" / "random_forest.skops").write_bytes(b"the user's model")
    meta = {"dataset": "t.csv", "created": "2026-01-01T00:00:00+00:00", "files": files}
    (out / "report.json").write_text(json.dumps({"meta": meta, "complete": True}))


def test_a_model_file_the_earlier_audit_did_not_write_is_not_written_over(tmp_path):
    out = tmp_path / "out"
    _earlier_audit(out, ["predictions.csv"])  # a --model audit of out/models/random_forest.skops
    table = pd.DataFrame({"x": range(40), "y": ["a", "b"] * 20, "g": ["u"] * 20 + ["v"] * 20})
    with pytest.raises(InputError, match=r"^out: .*random_forest\.skops is not a file of the"):
        run_audit(table, label="y", group="g", out=out, overwrite=True, sections=[])
    assert (out / "models" / "random_forest.skops").read_bytes() == b"the user's model"
    assert (out / "report.json").is_file()  # nothing deleted either


def test_the_earlier_audits_own_model_files_are_replaced(tmp_path):
    out = tmp_path / "out"
    _earlier_audit(out, ["predictions.csv", "models/random_forest.skops"])
    models = ["logistic_regression", "random_forest", "gradient_boosting"]
    assert prepare_output(out, True, models=models) == out
    (out / "report.json").write_text("not json")  # unreadable: the default models' files are its
    assert prepare_output(out, True, models=models) == out
    with pytest.raises(InputError, match="^out: .* already holds an audit"):
        prepare_output(out, False, models=models)
