"""Report figures draw names from the data as written (review 54): matplotlib read a group name
with '$' signs as mathtext, so '$10k-$50k' was drawn as an italic '10k-50k', and a name that is
not valid mathtext failed the overview and fairness sections of the audit."""

import pandas as pd
import pytest
from matplotlib.figure import Figure as MplFigure

from trustlab.audit import run_audit
from trustlab.report import Figure

NOT_MATHTEXT = r"\frac{1}{2}$^$"  # two '$' around something mathtext cannot parse


def test_names_with_dollar_signs_are_drawn_as_written():
    fig = MplFigure()
    ax = fig.add_subplot()
    ax.bar(["$10k-$50k", "over $50k"], [1, 2])  # tick labels made while the figure is drawn
    ax.set_title("income $10k-$50k")  # a text made before
    legend = ax.legend(ax.patches[:1], ["$10k-$50k"])
    Figure(fig, "rows per income")
    texts = [*ax.get_xticklabels(), ax.title, *legend.get_texts()]
    assert [t.get_text() for t in texts[:2]] == ["$10k-$50k", "over $50k"]
    assert not any(t.get_parse_math() for t in texts)


def test_a_name_that_is_not_mathtext_still_draws():
    fig = MplFigure()
    fig.add_subplot().bar([NOT_MATHTEXT, "b"], [1, 2])
    assert Figure(fig, "x").width > 0  # was ValueError: ParseSyntaxException


@pytest.mark.filterwarnings("ignore")
def test_audit_sections_survive_a_group_named_like_mathtext(tmp_path):
    groups = [NOT_MATHTEXT, "$10k-$50k", "<b>rich</b> & co"] * 40
    y = [0, 1, 1, 0, 1, 0, 0, 1] * 15
    pred = [0, 1, 0, 0, 1, 1, 0, 1] * 15
    table = pd.DataFrame({"x": range(120), "y": y, "g": groups, "p": pred})
    result = run_audit(
        table, label="y", group="g", pred="p", out=tmp_path, sections=["overview", "fairness"]
    )
    assert [(s.id, s.error) for s in result.report.sections] == [
        ("overview", None),
        ("fairness", None),
    ]
