"""Figures the CLI saves (trustlab._results.write_png) draw names from the data as written: a
group named '\\frac{1}{2}$^$' is not valid matplotlib mathtext, and `trustlab fairness dcp`
wrote result.json, then ended in 'unexpected failure: ValueError' (exit 1) with no dcp.png."""

import numpy as np
import pandas as pd

from cli_helpers import run_main as run


def test_fairness_dcp_plot_survives_a_group_named_like_broken_mathtext(capsys, tmp_path):
    rng = np.random.default_rng(54)
    n = 240
    groups = rng.choice(["\\frac{1}{2}$^$", "$10k-$50k", "plain"], n)
    y = rng.integers(0, 3, n)
    pred = np.where(rng.random(n) < 0.7, y, rng.integers(0, 3, n))
    data = tmp_path / "odd.csv"
    pd.DataFrame({"y": y, "p": pred, "inc": groups}).to_csv(data, index=False)
    out = tmp_path / "d"
    code, _, err = run(
        ["fairness", "dcp", "--data", str(data), "--label", "y", "--pred", "p", "--group", "inc",
         "--out", str(out)],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert (out / "dcp.png").stat().st_size > 1000


def test_write_png_leaves_mathtext_off_only_for_the_figure_it_saves(tmp_path):
    import matplotlib
    from matplotlib.figure import Figure

    from trustlab._results import write_png

    figure = Figure()
    ax = figure.add_subplot()
    ax.bar(["a$b$c$", "$x$"], [1, 2])
    ax.set_title("$\\notacommand$")
    write_png(tmp_path / "f.png", figure)
    assert (tmp_path / "f.png").stat().st_size > 1000
    assert matplotlib.rcParams["text.parse_math"] is True  # the user's setting is untouched
