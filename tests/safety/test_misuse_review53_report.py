"""The misuse report with epochs and an errored first epoch (review pass 53): the task counts by
its later, scored epoch (as the log's metrics), and the report's text says so (it said "the first
epoch's", while the sample of that epoch was counted as left out)."""

from __future__ import annotations

import pytest

inspect_ai = pytest.importorskip("inspect_ai")
pytest.importorskip("bandit")
from inspect_ai.model import ModelAPI, ModelOutput, modelapi  # noqa: E402

import trustlab.evals.misuse_stubs  # noqa: E402,F401  (registers trustlab-stub)
from trustlab.evals.logs import ReportTable, ReportText  # noqa: E402
from trustlab.evals.misuse import misuse, misuse_report  # noqa: E402

_CALLS = {"n": 0}


@modelapi(name="misuse-review53")
class FlakyStrong(ModelAPI):
    """Refuses everything; its first call raises (an endpoint that went down once)."""

    async def generate(self, input, tools, tool_choice, config):
        _CALLS["n"] += 1
        if _CALLS["n"] == 1:
            raise RuntimeError("endpoint down")
        return ModelOutput.from_content(self.model_name, "I can't help with that.")


def test_a_task_whose_first_epoch_errored_counts_by_its_scored_epoch(tmp_path):
    _CALLS["n"] = 0
    (log,) = inspect_ai.eval(
        misuse(suite="text", n=2),
        model="trustlab-stub/weak",
        model_roles={"strong": "misuse-review53/flaky", "weak": "trustlab-stub/weak"},
        epochs=2,
        fail_on_error=False,
        max_samples=1,
        log_dir=str(tmp_path),
        display="none",
    )
    errored = [(s.id, s.epoch) for s in log.samples if s.error is not None]
    assert len(errored) == 1 and errored[0][1] == 1
    metrics = log.results.scores[0].metrics
    blocks = misuse_report([log])
    (text,) = [b for b in blocks if isinstance(b, ReportText)]
    assert "first scored epoch" in text.text
    assert "1 sample(s) without a score (errored) left out" in text.text
    success = next(b for b in blocks if isinstance(b, ReportTable) and "per arm" in b.caption)
    rows = {r[success.columns.index("arm")]: r for r in success.rows}
    assert {r[success.columns.index("tasks")] for r in rows.values()} == {2}
    successes = success.columns.index("successes")
    assert rows["combination"][successes] / 2 == metrics["combination_success"].value
