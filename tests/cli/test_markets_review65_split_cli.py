"""Review 65: a population that the stratified train/test split cannot divide is refused naming
what to change, before any training. simulate_market(n_samples=20, random_state=6141) draws one
user with label 0 and simulate_market(n_samples=20, test_size=0.05) puts one user in the test
part: scikit-learn's split raised a bare ValueError ('The least populated classes in y have only
1 member', 'The test_size = 1 should be greater or equal to the number of classes = 2'), and
'trustlab strategic simulate --n-samples 20 --seed 6141' said 'unexpected failure', exit 1."""

from __future__ import annotations

import pytest

from cli_helpers import one_line, run_main
from trustlab.errors import InputError
from trustlab.strategic import simulate_market


def test_one_user_of_a_label_is_refused_naming_n_samples():
    with pytest.raises(InputError, match=r"^n_samples: .*got 1 with label 0 among 20 users"):
        simulate_market(n_samples=20, random_state=6141)


def test_one_test_user_is_refused_naming_test_size():
    with pytest.raises(InputError, match=r"^test_size: .*got 0\.05 \(1 user\)"):
        simulate_market(n_samples=20, test_size=0.05)


def test_cli_refuses_the_population_in_one_line(tmp_path, capsys):
    args = ["strategic", "simulate", "--n-samples", "20", "--seed", "6141", "--max-epochs", "1"]
    code, _, err = run_main(args, capsys)
    assert code == 2
    assert one_line(err).startswith("trustlab: error: --n-samples: expected a population")
