"""Diff review 65 D: a model.json recording sigma 0 (saved as trained without noise) certifies
with --sigma, as before review 65's model.json check; without --sigma it asks for one."""

import pytest

from cli_helpers import one_line
from trustlab.robustness import digits_model, save_base_model


@pytest.fixture(scope="module")
def noiseless(tmp_path_factory):
    return save_base_model(digits_model(hidden=4), tmp_path_factory.mktemp("m"), sigma=0)


def test_a_model_trained_without_noise_certifies_at_the_sigma_given(run, noiseless):
    # 8a905ad1 refused it: '--model: sigma: expected a number in (0, inf), got 0', exit 2
    args = ("--model", noiseless, "--limit", "1", "--n0", "10", "--n", "100", "--sigma", "0.25")
    code, _, err = run("robustness", "certify", *args)
    assert code == 0, err
    assert "differs from the 0 the model was trained at" in err


def test_a_model_trained_without_noise_needs_sigma(run, noiseless):
    code, _, err = run("robustness", "certify", "--model", noiseless, "--limit", "1")
    assert code == 2, err
    assert one_line(err).startswith("trustlab: error: --sigma: expected a noise level (the model")
