"""Review 58 (left): ActivationMap's fit summary and targets of extreme magnitude."""

import numpy as np

from trustlab.safety.transfer import ActivationMap, MapFit


def _rows(n, seed=58):
    rng = np.random.default_rng(seed)
    source = rng.normal(size=(n, 4))
    return source, source @ rng.normal(size=(4, 3)) + 1.0


def test_the_steps_note_is_for_max_epochs_none_and_says_what_happened():
    # the note "fewer than the about 3,500 that max_epochs=None aims at" also showed for a
    # max_epochs=200 the user gave, and after an early stop it said "the fit may stop short"
    source, target = _rows(40)
    settings = {"kind": "affine", "solver": "adam", "patience": 3}
    auto = ActivationMap(**settings).fit(source, target).fit_
    given = ActivationMap(max_epochs=200, **settings).fit(source, target).fit_
    assert auto.max_epochs == given.max_epochs == 200 and auto.adam_steps == given.adam_steps
    assert "Adam steps" in auto.summary() and "Adam steps" not in given.summary()
    assert auto.max_epochs_auto and not given.max_epochs_auto
    assert MapFit.from_dict(auto.to_dict(), auto.history).summary() == auto.summary()
    values = auto.to_dict() | {"epochs": 186, "best_epoch": 186, "adam_steps": 372}
    stopped = MapFit.from_dict(values | {"stopped_early": True}).summary()
    assert "the fit may stop short" not in stopped
    assert "was down to 1.2% of its start at epoch 186" in stopped  # 0.5 (1 + cos(pi 186/200))
    values |= {"epochs": 200, "best_epoch": 200, "adam_steps": 400}
    assert (
        "its cap of 200 epochs bound: the fit may stop short"
        in MapFit.from_dict(values | {"stopped_early": False}).summary()
    )
    values.pop("max_epochs_auto")  # saved before review 58: 200 epochs read as the cap
    assert MapFit.from_dict(values).max_epochs_auto
    assert not MapFit.from_dict(values | {"max_epochs": 150}).max_epochs_auto
