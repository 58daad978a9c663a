"""`sae score` keys a run on a subset of the held-out examples apart from the runs stored before
review 64, which drew a plain random subset (resuming them would mix the two draws); a run on all
held-out examples keeps the key it had."""

from trustlab.cli.interpret import _run_key, _subset_key


def test_a_subset_run_is_keyed_apart_from_the_plain_random_draw():
    base = {"n_test": 10, "methods": ["detection"], "n_not_active": 50}
    assert _run_key("score", **base, **_subset_key(10, 50)) != _run_key("score", **base)
    assert _subset_key(1, 50) == _subset_key(49, 50) == {"subset": "quantiles"}


def test_a_run_on_every_held_out_example_keeps_its_key():
    base = {"n_test": 50, "methods": ["detection"], "n_not_active": 50}
    assert _subset_key(50, 50) == {}
    assert _run_key("score", **base, **_subset_key(50, 50)) == _run_key("score", **base)
