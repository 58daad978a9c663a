"""The overview with more groups than the fairness section's limit (an ID-like group column)
shows the largest groups in its per-group tables and bars, with a note on the rest: 20,000
one-row groups kept the section drawing one bar per group for minutes."""

import numpy as np
import pandas as pd
from sklearn.metrics import accuracy_score

from trustlab.audit.context import AuditContext
from trustlab.audit.sections import fairness, overview
from trustlab.report import Figure, Table


def _context(groups_test, y_test, pred, groups_train=(), y_train=(), *, group="uid",
             mode="predictions"):  # fmt: skip
    """An audit of labels "no"/"yes" without features; ``pred``: one model's predictions, or a
    dict of them by model name."""
    return AuditContext(
        dataset="t",
        label="y",
        group=group,
        labels=np.array(["no", "yes"]),
        feature_names=[],
        X_train=pd.DataFrame(index=range(len(y_train))),
        X_test=pd.DataFrame(index=range(len(y_test))),
        y_train=np.array(y_train, dtype=object),
        y_test=np.array(y_test, dtype=object),
        g_train=np.array(groups_train, dtype=object),
        g_test=np.array(groups_test, dtype=object),
        predictions=pred if isinstance(pred, dict) else {"m": np.array(pred, dtype=object)},
        mode=mode,
    )


def _id_context(n_ids):
    """A group 'big' of 5 rows and ``n_ids`` one-row groups."""
    groups = ["big"] * 5 + [f"id{i:02d}" for i in range(n_ids)]
    y = ["yes", "no"] * (len(groups) // 2) + ["yes"] * (len(groups) % 2)
    return _context(groups, y, ["yes"] * len(groups))


def _spy_figure(monkeypatch):
    drawn = []
    real = overview._distribution_figure

    def spy(distribution, ctx):
        drawn.append([d["group"] for d in distribution])
        return real(distribution, ctx)

    monkeypatch.setattr(overview, "_distribution_figure", spy)
    return drawn


def test_beyond_the_limit_the_tables_and_bars_show_the_largest_groups(monkeypatch):
    monkeypatch.setattr(fairness, "MAX_GROUPS", 30)
    drawn = _spy_figure(monkeypatch)
    section = overview.build(_id_context(31))  # 32 groups
    tables = [b for b in section.blocks if isinstance(b, Table)]
    shown = ["big"] + [f"id{i:02d}" for i in range(overview.SHOWN_GROUPS - 1)]
    assert [row[0] for row in tables[0].rows] == shown
    assert drawn == [shown]
    assert tables[2].columns == ["uid", "audited rows", "m"]
    assert [row[0] for row in tables[2].rows] == shown
    notes = [b.text for b in section.blocks if getattr(b, "kind", None) == "note"]
    left = 32 - overview.SHOWN_GROUPS
    assert notes == [
        f"'uid' holds 32 groups (more than 30, as an ID-like column would): the tables and bars "
        f"below show the {overview.SHOWN_GROUPS} largest; the other {left} groups ({left} rows) "
        "are left out of them (report.json's overview data holds every group)."
    ]
    assert len(section.data["groups"]) == 32 and section.data["groups_shown"] == 20
    assert len(section.data["models"]["m"]["accuracy_by_group"]) == 32
    assert "32 groups of 'uid'" in section.summary


def test_up_to_the_limit_every_group_is_shown_without_a_note(monkeypatch):
    monkeypatch.setattr(fairness, "MAX_GROUPS", 30)
    drawn = _spy_figure(monkeypatch)
    section = overview.build(_id_context(25))  # 26 groups, 'big' first in sorted order
    assert len(drawn[0]) == 26 and drawn[0][0] == "big"
    assert section.data["groups_shown"] == 26
    assert not [b for b in section.blocks if getattr(b, "kind", None) == "note"]
    assert any(isinstance(b, Figure) for b in section.blocks)


def test_group_counts_and_accuracies_match_a_direct_count():
    rng = np.random.default_rng(3)
    g_test = rng.choice(["a", "b", "c"], size=60)
    y_test = rng.choice(["no", "yes"], size=60)
    pred = rng.choice(["no", "yes"], size=60)
    ctx = _context(g_test, y_test, pred, groups_train=["d", "a"], y_train=["yes", "no"])
    data = overview.build(ctx).data
    g_all = np.concatenate([g_test, ["d", "a"]])
    y_all = np.concatenate([y_test, ["yes", "no"]])
    for entry in data["groups"]:
        in_group = g_all == entry["group"]
        assert entry["rows"] == in_group.sum()
        assert entry["label_counts"] == {
            k: int(np.sum(y_all[in_group] == k)) for k in ("no", "yes")
        }
    by_group = data["models"]["m"]["accuracy_by_group"]
    for group in "abc":
        assert by_group[group] == accuracy_score(y_test[g_test == group], pred[g_test == group])
    assert by_group["d"] is None


def test_the_bars_show_at_most_figure_groups_largest_groups(monkeypatch):
    """Under the limit too: 900 groups drew a 37,600-pixel-tall figure."""
    groups = ["a"] * 3 + ["b"] + ["c"] * 5 + ["d"] * 2 + ["e"]
    ctx = _context(groups, ["yes", "no"] * 6, ["yes"] * 12)
    full = next(b for b in overview.build(ctx).blocks if isinstance(b, Figure))
    monkeypatch.setattr(overview, "FIGURE_GROUPS", 3)
    section = overview.build(ctx)
    figure = next(b for b in section.blocks if isinstance(b, Figure))
    assert figure.caption == (
        "Label distribution within each group (uid): the 3 largest of 5 groups (the table lists all)"
    )
    assert figure.height < full.height
    table = next(b for b in section.blocks if isinstance(b, Table))
    assert [row[0] for row in table.rows] == ["a", "b", "c", "d", "e"]
