"""Review 65 (diff review Q of 0ef8e92d): ``robustness train`` with a --holdout split refuses a
--seed of 2**32 or more in one line, exit 2: scikit-learn's split takes 32-bit seeds, and such a
seed (accepted by the shared --seed check, which allows up to 2**64 - 1) was a raw
'unexpected failure: InvalidParameterError', exit 1."""

import numpy as np
import pytest

from cli_helpers import one_line


@pytest.mark.parametrize("seed", [2**32, 2**64 - 1])
def test_a_seed_too_large_for_the_holdout_split_is_refused(run, tmp_path, seed):
    rng = np.random.default_rng(0)
    rows = ["a,b,label", *(f"{a:.3f},{b:.3f},{int(a > 0)}" for a, b in rng.normal(size=(20, 2)))]
    (tmp_path / "r.csv").write_text("\n".join(rows) + "\n")
    code, _, err = run(
        "robustness", "train", "--data", tmp_path / "r.csv", "--out", tmp_path / "m", "--seed", seed
    )
    assert code == 2, err
    assert one_line(err) == (
        f"trustlab: error: --seed: expected a seed in [0, 2**32-1] for the --holdout split, "
        f"got {seed}"
    )
    assert not (tmp_path / "m" / "model.pt").exists()
