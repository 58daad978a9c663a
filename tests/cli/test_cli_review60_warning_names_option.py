"""A library warning a CLI command passes on names the option the user typed, as errors do:
'evaluate rank --n-bootstrap 10' warned 'n_bootstrap=10: a 95% percentile interval needs ...'."""

import sys
import warnings

import numpy as np

from cli_helpers import one_line, run_main


def _shown(message, category, filename, lineno, file=None, line=None):
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def test_a_warning_names_the_option_not_the_library_argument(tmp_path, capsys):
    rng = np.random.default_rng(0)
    paths = []
    for m in range(2):
        np.save(tmp_path / f"m{m}.npy", rng.dirichlet([1, 1, 1], size=20))
        paths.append(tmp_path / f"m{m}.npy")
    np.save(tmp_path / "y.npy", rng.integers(0, 3, 20))
    argv = ["evaluate", "rank", "-p", *paths, "--labels", tmp_path / "y.npy", "--json"]
    with warnings.catch_warnings():  # shown as the CLI shows them, not recorded by pytest
        warnings.simplefilter("always")
        warnings.showwarning = _shown
        code, _, err = run_main([*argv, "--n-bootstrap", "10"], capsys)
    assert code == 0
    assert one_line(err).startswith(
        "trustlab: warning: --n-bootstrap 10: a 95% percentile interval needs at least 40"
    ), err
