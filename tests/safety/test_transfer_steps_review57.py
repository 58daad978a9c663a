"""ActivationMap on few rows (review 57, docs2): max_epochs=None caps the epochs at 200, so 400
rows at batch 256 get 2 steps an epoch, about 400 Adam steps against the ~3,500 the default is
sized for; the held-out R^2 of a noise-free linear map was 0.4 and the summary did not say that
training was short. The fit now records its Adam steps and the summary says when they are fewer."""

import numpy as np

from trustlab.safety.transfer import ActivationMap, MapFit


def _rows(n, seed=5):
    rng = np.random.default_rng(seed)
    source = rng.normal(size=(n, 8))
    return source, source @ rng.normal(size=(8, 6)) + 1.0


def test_few_rows_the_summary_says_the_adam_steps_fell_short():
    source, target = _rows(400)
    fit = ActivationMap(kind="affine", solver="adam").fit(source, target).fit_
    assert fit.adam_steps == fit.epochs * 2  # 360 training rows, batch 256
    assert fit.adam_steps < 3500 and fit.held_out_r2 < 0.9  # short, far from lstsq's 1.0
    summary = fit.summary()
    assert f"only {fit.adam_steps} Adam steps, fewer than the about 3,500" in summary
    assert "smaller batch_size" in summary and "solver='lstsq'" in summary
    again = MapFit.from_dict(fit.to_dict(), fit.history)
    assert again.adam_steps == fit.adam_steps and again.summary() == summary


def test_enough_steps_closed_form_and_old_maps_get_no_note():
    source, target = _rows(60)
    lstsq = ActivationMap(kind="affine").fit(source, target).fit_
    assert lstsq.adam_steps == 0 and "Adam steps" not in lstsq.summary()
    values = lstsq.to_dict() | {"epochs": 200, "max_epochs": 200, "best_epoch": 200}
    assert "Adam steps" not in MapFit.from_dict(values | {"adam_steps": 3600}).summary()
    assert "only 399 Adam steps" in MapFit.from_dict(values | {"adam_steps": 399}).summary()
    # a max_epochs chosen by the user (the study's 8 epochs): no note
    values |= {"epochs": 8, "max_epochs": 8, "best_epoch": 8}
    assert "Adam steps" not in MapFit.from_dict(values | {"adam_steps": 80}).summary()
    values.pop("adam_steps")  # a map saved before review 57
    assert MapFit.from_dict(values).adam_steps == 0
