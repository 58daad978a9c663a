"""Third review of the polytope evaluation's wording: with the gate or the refusal direction,
the summary and the page said 'corrected steps 2, left infeasible 0' and 'checked steps
corrected' for prompts whose whole answer was replaced or steered (no state is corrected, and
nothing can be left infeasible); Safe Flow keeps its step counts."""

from dataclasses import replace

from test_polytope_wording import _evaluation as wording_evaluation

from trustlab.audit.sections.safety_polytope import build_page


def _evaluation(correction):
    """test_polytope_wording's evaluation with two flagged steps, half the safe prompts'
    answers steered and one example."""
    example = {"prompt": "p", "unsafe": True, "before": "b", "after": "a", "corrected_steps": 1}
    return replace(
        wording_evaluation(correction, 1),
        flagged_steps=2,
        steered_step_share={"unsafe": 1.0, "safe": 0.5},
        examples=(example,),
    )


def test_gate_and_direction_report_flagged_prompts_not_corrected_steps():
    fates = {
        "gate": "answer replaced by the fixed refusal",
        "direction": "answered with the refusal direction added",
    }
    for correction, fate in fates.items():
        ev = _evaluation(correction)
        summary, html = ev.summary(), build_page(ev).to_html()
        for text in (summary, html):
            assert "corrected steps" not in text and "steps corrected" not in text
            assert "infeasible" not in text
        assert f"flagged prompts 2, {fate} (no state corrected)" in summary
        assert f"prompts flagged ({fate}): unsafe 1.00, safe 0.50" in summary
        assert f"prompts flagged ({fate}), safe prompts" in html
        assert "flagged (1 = yes)" in html


def test_safe_flow_keeps_its_step_counts():
    ev = _evaluation("project")
    summary, html = ev.summary(), build_page(ev).to_html()
    assert "corrected steps 2, left infeasible 0" in summary
    assert "checked steps corrected: unsafe 1.00, safe 0.50" in summary
    assert "checked steps corrected, safe prompts" in html
    assert "corrected steps 2, left infeasible 0" in html


def test_a_gated_generation_summary_counts_flagged_prompts():
    from trustlab.safety import SteeredGeneration

    def generation(correction):
        return SteeredGeneration(
            correction=correction, layer=0, correct_first=1, margin=1e-6, strength=None,
            prompts=("a", "b"), texts=("x", "y"), flagged_steps=(1, 0),
            infeasible_steps=(0, 0), checked_steps=(1, 1),
        )  # fmt: skip

    gate = generation("gate").summary()
    assert gate.splitlines() == [
        "gate correction at layer 0: 1 of 2 prompts flagged (answer replaced by the fixed refusal)",
        "- 'a' [flagged]: 'x'",
        "- 'b' [not flagged]: 'y'",
    ]
    project = generation("project").summary()
    assert project.splitlines()[0] == (
        "project correction at layer 0: 1 of 2 generations corrected "
        "(1 of 2 checked steps, 0 left infeasible)"
    )
    assert project.splitlines()[1] == "- 'a' [1 corrected]: 'x'"
