"""Audit review 3: notes on a label of many whole numbers and an ID-like group column, and the
caveat printed after the headline equalized odds difference (its class, interval, the groups
that set it, a small group among them, an undefined rate counted as 0)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from trustlab.audit import run_audit
from trustlab.audit.group_metrics import equalized_odds_caveat, largest_equalized_odds


def _table(n: int = 240, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.choice(["no", "yes"], n)
    flip = rng.random(n) < 0.2
    return pd.DataFrame(
        {
            "x": rng.normal(size=n),
            "y": y,
            "yhat": np.where(flip, np.where(y == "yes", "no", "yes"), y),
            "g": rng.choice(["a", "b"], n),
        }
    )


def _audit(frame, tmp_path, sections=("overview",), **columns):
    columns = {"label": "y", "group": "g", "pred": "yhat"} | columns
    return run_audit(frame, out=tmp_path, sections=list(sections), **columns)


def test_a_label_of_many_whole_numbers_is_noted_as_a_possible_regression_target(tmp_path):
    frame = _table()
    frame["age"] = np.arange(len(frame)) % 40 + 20  # 40 whole numbers
    frame["age_hat"] = frame["age"]
    result = _audit(frame, tmp_path, label="age", pred="age_hat")
    [note] = [n for n in result.context.notes if "regression" in n]
    assert note.startswith("Label 'age' holds 40 different whole numbers")
    assert f"note: {note}" in result.summary()
    overview = next(s for s in result.report.sections if s.id == "overview")
    assert note in overview.data["notes"]  # shown on the page's overview


def test_a_label_of_few_whole_numbers_or_many_texts_gets_no_such_note(tmp_path):
    frame = _table()
    frame["rating"] = np.arange(len(frame)) % 5
    frame["rating_hat"] = frame["rating"]
    result = _audit(frame, tmp_path / "few", label="rating", pred="rating_hat")
    assert not [n for n in result.context.notes if "regression" in n]
    frame["word"] = [f"w{i % 40}" for i in range(len(frame))]
    frame["word_hat"] = frame["word"]
    result = _audit(frame, tmp_path / "text", label="word", pred="word_hat")
    assert not [n for n in result.context.notes if "regression" in n]


def test_an_id_like_group_column_is_noted(tmp_path, caplog):
    frame = _table()
    frame["uid"] = [f"id{i}" for i in range(len(frame))]
    with caplog.at_level("WARNING", logger="trustlab.audit"):
        result = _audit(frame, tmp_path / "id", group="uid")
    [note] = [n for n in result.context.notes if "as an ID would" in n]
    assert note.startswith("Group column 'uid' holds 240 different values in 240 rows")
    # said as the table is read too: on 20,000 rows such an audit sat in DCP for minutes
    assert note in caplog.messages
    result = _audit(frame, tmp_path / "few")  # two groups of about 120 rows: no note
    assert not [n for n in result.context.notes if "as an ID would" in n]


def test_the_headline_equalized_odds_difference_names_a_small_group_that_sets_it(tmp_path):
    frame = _table()
    # a group of 6 rows whose predictions are all wrong: it sets the difference
    tiny = pd.DataFrame({"x": 0.0, "y": ["yes", "no"] * 3, "yhat": ["no", "yes"] * 3, "g": "tiny"})
    frame = pd.concat([frame, tiny], ignore_index=True)
    result = _audit(frame, tmp_path, sections=("overview", "fairness"))
    source = result.headline()["yhat"]["equalized_odds_difference_source"]
    stored = next(s for s in result.report.sections if s.id == "fairness").data
    classes = stored["group_metrics"]["models"]["yhat"]
    assert source["class"] == "yes" and source["estimate"] == pytest.approx(
        classes["yes"]["equalized_odds_difference"]["estimate"]
    )
    assert "tiny" in source["groups"] and source["groups"]["tiny"] == 6
    line = next(x for x in result.summary().splitlines() if x.startswith("  yhat:"))
    estimate = source["estimate"]
    assert f"equalized odds difference {estimate:.4f} (95% interval [" in line
    assert "tiny (6 audited rows, 3 truly yes)" in line
    assert "tiny has under 100 rows: noisy rates" in line


def _metrics(estimate, tpr, fpr, counts, where_defined):
    def rate(v):
        return {"estimate": v, "lower": None, "upper": None}

    by_group = {
        g: {
            "count": counts[g],
            "true_positive_rate": rate(tpr[g]),
            "false_positive_rate": rate(fpr[g]),
        }
        for g in tpr
    }
    return {
        "equalized_odds_difference": {"estimate": estimate, "lower": 0.1, "upper": 0.9},
        "by_group": by_group,
        "equalized_odds_difference_where_defined": where_defined,
    }


def test_the_caveat_says_when_the_difference_counts_an_undefined_rate_as_0():
    classes = {
        "A": _metrics(0.2, {"u": 0.5, "v": 0.7}, {"u": 0.1, "v": 0.1}, {"u": 500, "v": 400}, 0.2),
        # v has no row of class B: fairlearn's TPR 0 sets the difference
        "B": _metrics(0.8, {"u": 0.8, "v": 0.0}, {"u": 0.1, "v": 0.2}, {"u": 500, "v": 400}, 0.1),
    }
    source = largest_equalized_odds(classes)
    assert source["class"] == "B" and source["rate"] == "TPR"
    assert source["groups"] == {"u": 500, "v": 400}
    caveat = equalized_odds_caveat(source, one_vs_rest=True)
    assert caveat == (
        " (class B; 95% interval [0.1000, 0.9000]; the TPRs of u (500 audited rows) and v (400 "
        "audited rows); it counts an undefined rate as 0 (0.1000 where the rates are defined))"
    )
    assert equalized_odds_caveat(None, one_vs_rest=False) == ""


@pytest.mark.parametrize(
    ("sections", "got"),
    [
        (["fastpd"], "got fastpd"),  # a --pred audit has no model to explain
        (["participation"], "got participation"),  # no answers files
    ],
)
def test_sections_that_leave_an_empty_report_are_refused(tmp_path, sections, got):
    from trustlab.errors import InputError

    with pytest.raises(InputError, match="sections: expected a section a predictions audit") as e:
        _audit(_table(), tmp_path, sections=sections)
    assert str(e.value).endswith(got)
    assert not list(tmp_path.iterdir())  # refused before anything is written


def test_a_repeated_section_is_refused_before_any_work(tmp_path):
    from trustlab.errors import InputError

    with pytest.raises(
        InputError, match="sections: expected names among .*, each once, got 'overview'$"
    ):
        _audit(_table(), tmp_path, sections=("overview", "overview"))
    assert not list(tmp_path.iterdir())


def test_a_class_a_model_never_predicts_is_pointed_out(tmp_path):
    frame = _table()
    frame.loc[:5, "y"] = "rare"  # 6 rows of a rare class, never predicted
    result = _audit(frame, tmp_path, sections=("overview",))
    overview = next(s for s in result.report.sections if s.id == "overview")
    assert overview.data["never_predicted"] == {"yhat": ["rare"]}
    [warning] = [b for b in overview.blocks if getattr(b, "kind", "") == "warning"]
    assert warning.text.startswith(
        "Classes a model never predicts (audited rows truly of that class): yhat never "
        "predicts rare (6)."
    )
    # DCP's per-label share of a never-predicted class is not 0 (its rows go to other classes)
    assert "DCP" not in warning.text and "equalized odds differences" in warning.text
    scores = overview.data["models"]["yhat"]
    line = f"yhat: accuracy {scores['accuracy']:.3f} (balanced {scores['balanced_accuracy']:.3f})"
    assert line in result.summary()
    frame.loc[:5, "yhat"] = "rare"
    result = _audit(frame, tmp_path / "predicted", sections=("overview",))
    overview = next(s for s in result.report.sections if s.id == "overview")
    assert overview.data["never_predicted"] == {}
    assert not [b for b in overview.blocks if getattr(b, "kind", "") == "warning"]


def test_a_header_only_table_is_called_a_table_without_rows(tmp_path):
    from trustlab.errors import InputError

    path = tmp_path / "empty.csv"
    path.write_text("y,g,x\n", encoding="utf-8")
    with pytest.raises(InputError) as e:
        run_audit(path, label="y", group="g", out=tmp_path / "out")
    assert str(e.value) == (
        "data: expected rows with a label and a group value, got a table without rows"
    )
    path.write_text("y,g,x\n,a,1\nb,,2\n", encoding="utf-8")
    with pytest.raises(
        InputError, match=r"got none among its 2 rows \(missing values: y: 1, g: 1\)$"
    ):
        run_audit(path, label="y", group="g", out=tmp_path / "out")


def test_a_difference_of_0_names_no_groups():
    classes = {
        "A": _metrics(0.0, {"u": 1.0, "v": 1.0}, {"u": 0.0, "v": 0.0}, {"u": 5, "v": 400}, 0.0),
    }
    source = largest_equalized_odds(classes)
    assert source["groups"] == {} and source["rate"] is None  # was {"u": 5}: one group, no spread
    assert equalized_odds_caveat(source, one_vs_rest=False) == " (95% interval [0.1000, 0.9000])"
