"""ActivationMap's early stop, as its summary words it (review 3): the rule is a held-out FVU
falling by less than 0.1 % over ``patience`` epochs, a slow-down that is not a minimum. The
summary said "stopped early (best epoch N)" while the FVU still fell every epoch, far above the
least-squares map's."""

import numpy as np

from trustlab.safety.transfer import ActivationMap, MapFit


def _fit(fvus, best_epoch):
    history = tuple(
        {"epoch": e, "train_mse": 1.0, "held_out_fvu": f} for e, f in enumerate(fvus, 1)
    )
    return MapFit(
        "affine", 6, 4, 400, 40, len(fvus), best_epoch, True, 0.1, 0.9, fvus[best_epoch - 1],
        1 - fvus[best_epoch - 1], 0.1, 0.9, fvus[best_epoch - 1], 1 - fvus[best_epoch - 1],
        max_epochs=300, history=history,
    )  # fmt: skip


def test_a_stop_while_the_fvu_still_falls_says_so():
    # 0.5, 0.2, then three epochs each under 0.1 % lower than 0.2: stopped at patience 3
    summary = _fit([0.5, 0.2, 0.19990, 0.19985, 0.19982], best_epoch=5).summary()
    assert "fell less than 0.1% in the last 3 epochs" in summary
    assert "kept the last epoch, the FVU still falling" in summary
    assert "best epoch" not in summary


def test_a_stop_after_a_minimum_names_the_kept_epoch():
    summary = _fit([0.5, 0.2, 0.19, 0.191, 0.192, 0.1905], best_epoch=3).summary()
    assert "fell less than 0.1% in the last 3 epochs (kept epoch 3, its lowest)" in summary


def test_an_adam_affine_map_stopped_short_of_least_squares_is_not_called_converged():
    rng = np.random.default_rng(0)
    A, b = rng.normal(size=(4, 6)), 3 * rng.normal(size=4)
    S = rng.normal(size=(400, 6)) * rng.uniform(0.1, 5, size=6) + rng.normal(size=6)
    T = S @ A.T + b + 0.01 * rng.normal(size=(400, 4))
    adam = ActivationMap(kind="affine", solver="adam", max_epochs=300, patience=2, batch_size=64)
    fit = adam.fit(S, T).fit_
    fvus = [h["held_out_fvu"] for h in fit.history]
    closed = ActivationMap(kind="affine").fit(S, T).fit_
    assert fit.stopped_early and fit.epochs < 300
    # what happened: still falling at the stop, far above the least-squares map's FVU
    assert fit.best_epoch == fit.epochs and fvus[-1] < fvus[-2] < fvus[-3]
    assert closed.held_out_fvu < fit.held_out_fvu / 100
    assert "the FVU still falling" in fit.summary()
