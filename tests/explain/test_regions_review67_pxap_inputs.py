"""Review 67 of pxap / pxap_per_image inputs: huge n_bins and complex soft maps.

Measured on the old file: pxap([[[0.5, 0.4]]], [[[1, 0]]], n_bins=10**30) gave 0.5 (the exact
and every smaller grid give 1.0): floor(s * n_bins) past 2**63 overflowed the int64 cast
(numpy's 'invalid value encountered in cast') and merged different scores into one bin; any
n_bins above 9.2e18 could do the same. Complex soft maps (0.5 + 0.3j) were cast to float with
only numpy's ComplexWarning and scored on their real part. Now n_bins above 2**53 (the grid on
which every bin index is an exact int64) and complex soft maps (numpy or torch) are refused
by name; n_bins up to 2**53 and real maps score as before."""

import warnings

import numpy as np
import pytest
import torch

from trustlab.errors import InputError
from trustlab.explain.regions import pxap, pxap_per_image

S = np.array([[[0.5, 0.4]]])
T = np.array([[[1, 0]]], dtype=bool)


@pytest.mark.parametrize("score", [pxap, pxap_per_image])
@pytest.mark.parametrize("n_bins", [2**53 + 1, 2**63, 10**19, 10**30])
def test_a_grid_past_2_53_is_refused(score, n_bins):
    with pytest.raises(InputError, match=r"^n_bins: expected an integer in \[1, 2\*\*53\]") as e:
        score(S, T, n_bins=n_bins)
    assert e.value.argument == "n_bins"


@pytest.mark.parametrize("n_bins", [None, 10, 100000, 2**53])
def test_grids_up_to_2_53_score_as_before(n_bins):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert pxap(S, T, n_bins=n_bins) == 1.0
        assert pxap_per_image(S, T, n_bins=n_bins).tolist() == [1.0]
    assert pxap(S, T, n_bins=1) == 0.5  # one bin: a tie, as before


@pytest.mark.parametrize("score", [pxap, pxap_per_image])
@pytest.mark.parametrize("maps", [S + 0.3j, S + 0j, torch.tensor(S) + 0.3j])
def test_complex_soft_maps_are_refused(score, maps):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # was a ComplexWarning and the real part's score
        with pytest.raises(InputError, match=r"^soft_maps: expected real values") as e:
            score(maps, T)
    assert e.value.argument == "soft_maps"


def test_real_maps_of_any_kind_score_as_before():
    for maps in (S, S.tolist(), torch.tensor(S), S.astype(np.float32)):
        assert pxap(maps, T) == 1.0
