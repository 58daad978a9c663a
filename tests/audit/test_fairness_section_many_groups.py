"""An audit whose group column holds more than MAX_GROUPS groups (an ID-like column) skips DCP
and the group metrics with a note instead of spending minutes on them (20,000 one-row groups
sat in this section for over 180 s)."""

import numpy as np

from trustlab.audit.sections import fairness


class _Context:
    def __init__(self, n_groups):
        rng = np.random.default_rng(0)
        self.y_test = rng.choice(["no", "yes"], size=n_groups)
        self.g_test = np.array([f"id{i}" for i in range(n_groups)])
        self.labels = np.array(["no", "yes"])
        self.predictions = {"yhat": self.y_test.copy()}
        self.random_state, self.n_test, self.label, self.group = 0, n_groups, "y", "uid"
        self.mode = "zoo"  # the default models' test split (the section words its counts so)


def test_more_groups_than_the_limit_skips_the_section_with_a_note(monkeypatch):
    monkeypatch.setattr(fairness, "MAX_GROUPS", 30)
    section = fairness.build(_Context(31))
    assert section.data["skipped"].startswith("Not computed: the 31 audited rows hold 31 groups")
    assert "models" not in section.data and section.data["n_groups"] == 31
    assert [b.kind for b in section.blocks] == ["note"]
    assert "not computed" in section.summary


def test_up_to_the_limit_the_section_is_computed(monkeypatch):
    monkeypatch.setattr(fairness, "MAX_GROUPS", 30)
    section = fairness.build(_Context(30))
    assert "skipped" not in section.data and set(section.data["models"]) == {"yhat"}
