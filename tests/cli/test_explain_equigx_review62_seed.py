"""Review 62 (round 2): `explain equigx explain --seed` had no effect without --data (a --graph
file or the model's own test graphs) and was ignored without a word; now a usage error, as
--data/--index with --graph and --n-graphs without --data are."""

import pytest

pytest.importorskip("e3nn")

from cli_helpers import one_line  # noqa: E402


@pytest.mark.parametrize("where", [["--graph", "g.npz"], ["--index", "1"]])
def test_seed_without_data_is_a_usage_error(run, where):
    # refused before the model loads (no graph file is read)
    code, _, err = run("explain", "equigx", "explain", "--checkpoint", "shapes_platonic",
                       *where, "--seed", "7")  # fmt: skip
    assert code == 2, err
    assert one_line(err) == (
        "trustlab: error: --seed: expected --seed only with --data NAME (it generates them), got 7"
    )
