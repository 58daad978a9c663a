"""Review 60 of randomized smoothing: argument checks of train_smoothed."""

import numpy as np
import pytest

from trustlab.errors import InputError

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("milestones", [5, "12", 2.5])
def test_train_smoothed_refuses_milestones_that_are_not_a_list_of_epochs(milestones):
    # milestones=5 was a raw TypeError ('int' object is not iterable); "12" was read digit by
    # digit ("expected an integer >= 1, got '1'"). Refused before any training step.
    from trustlab.robustness import train_smoothed

    model = torch.nn.Linear(4, 3)
    X, y = np.zeros((6, 4)), np.arange(6) % 3
    with pytest.raises(InputError, match="milestones: expected a list of epochs"):
        train_smoothed(model, X, y, milestones=milestones, max_epochs=1, random_state=0)


@pytest.mark.parametrize("milestones", [[1], (1, 2), np.array([1]), range(1, 3), []])
def test_train_smoothed_still_takes_milestones_as_any_sequence_of_epochs(milestones):
    # Without a training step (cheap): the labels, checked after the settings, are refused,
    # so the milestones passed.
    from trustlab.robustness import train_smoothed

    X, y = np.zeros((6, 4)), np.array([0, 1, 2, 0, 1, 7])
    with pytest.raises(InputError, match="^y: "):
        train_smoothed(torch.nn.Linear(4, 3), X, y, milestones=milestones, max_epochs=1)
