"""What the gate and the direction correction say they did (review finding: "first 1 steps
corrected" for corrections that act on the whole answer, and an ignored ``correct_first``)."""

import numpy as np
import pytest

from trustlab.audit.sections.safety_polytope import build_page
from trustlab.errors import InputError
from trustlab.safety import (
    FacetReport,
    PolytopeEvaluation,
    SafetyPolytope,
    SteeredGeneration,
    SteeringComparison,
    steered_generate,
)


@pytest.mark.parametrize("correction", ["gate", "direction"])
def test_correct_first_other_than_one_is_refused_where_it_would_be_ignored(correction):
    box = SafetyPolytope.from_parameters([[1.0, 0.0]], [1.0], layer=0)
    with pytest.raises(InputError, match=r"^correct_first: expected 1 with correction="):
        steered_generate(box, None, ["hi"], 4, correction=correction, correct_first=5)


def _generation(correction, flagged):
    return SteeredGeneration(
        correction=correction,
        layer=0,
        correct_first=1,
        margin=1e-6,
        strength=None if correction == "project" else 1.0,
        prompts=("a", "b"),
        texts=("x", "y"),
        flagged_steps=flagged,
        infeasible_steps=(0, 0),
        checked_steps=(1, 1),
    )


@pytest.mark.parametrize(
    ("correction", "flagged_line"),
    [
        ("gate", "(flagged: the fixed refusal text)"),
        ("direction", "(flagged: answered with the refusal direction added at every step)"),
        ("project", "(1 step(s) corrected)"),
    ],
)
def test_the_comparison_says_what_happened_to_each_answer(correction, flagged_line):
    summary = SteeringComparison(("p", "q"), _generation(correction, (1, 0))).summary()
    assert flagged_line in summary
    if correction != "project":
        assert "step(s) corrected" not in summary
        assert "(not flagged: the plain answer)" in summary


def _evaluation(correction, correct_first):
    facets = FacetReport.from_violations(np.array([[True], [False]]), np.array(["h", "b"]))
    rates = {"before": 0.0, "after": 0.5, "n": 2}
    return PolytopeEvaluation(
        model="m", layer=0, correction=correction, correct_first=correct_first, margin=1e-6,
        max_new_tokens=4, n_unsafe=1, n_safe=1, auroc=1.0, auroc_interval=(1.0, 1.0),
        tpr_at_5_fpr=1.0, tpr=1.0, fpr=0.0, category_detection={"b": 0.0, "h": 1.0},
        roc_fpr=np.array([0.0, 1.0]), roc_tpr=np.array([1.0, 1.0]), facets=facets,
        refusal={"unsafe": rates, "safe": rates}, benign_perplexity_before=None,
        benign_perplexity_after=None, flagged_steps=1, infeasible_steps=0,
        step_flag_rate={"unsafe": 1.0, "safe": 0.0},
        steered_step_share={"unsafe": 1.0, "safe": 0.0}, examples=(),
    )  # fmt: skip


def test_the_evaluation_does_not_call_a_whole_answer_one_corrected_step():
    for correction in ("gate", "direction"):
        ev = _evaluation(correction, 1)
        html = build_page(ev).to_html()
        for text in (ev.summary(), html):
            assert "first 1 steps" not in text
            assert "flagged prompts, decided by the prompt" in text  # ' is escaped in HTML
    project = _evaluation("project", 3)
    assert "first 3 steps checked" in project.summary()
    assert "first 3 steps checked" in build_page(project).to_html()
