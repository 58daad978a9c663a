"""DSIMechanism names the leave-one-group-out subset on which fn's output is unusable."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.privacy import DSIMechanism

X = np.arange(12.0).reshape(6, 2)
Y = np.array([0, 0, 1, 1, 2, 2])


def _per_class_means(data):
    x, y = data
    return np.stack([x[y == c].mean(axis=0) for c in range(3)])


def _means_of_classes_present(data):
    x, y = data
    return np.array([x[y == c].mean() for c in np.unique(y)])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the mean of an empty class
def test_a_non_finite_output_without_a_group_names_that_group():
    # group 4 holds all of class 2: fn(data) is finite, fn without group 4 is NaN; the error
    # said 'fn(data): expected finite values' (fn(data) is fine) and named no group
    mech = DSIMechanism(_per_class_means, epsilon=1.0, delta=1e-5)
    with pytest.raises(InputError, match=r"^fn\(data without group 4, 4 records\): .*finite"):
        mech.fit((X, Y), [0, 1, 2, 3, 4, 4])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_single_group_names_the_empty_subset():
    mech = DSIMechanism(lambda rows: rows.mean(axis=0), epsilon=1.0, delta=1e-5)
    with pytest.raises(InputError, match=r"^fn\(data without group 0, 0 records\): "):
        mech.fit(X, [0] * 6)


def test_another_output_shape_without_a_group_names_that_group():
    mech = DSIMechanism(_means_of_classes_present, epsilon=1.0, delta=1e-5)
    with pytest.raises(
        InputError, match=r"^fn\(data without group 'a', 4 records\): expected the shape of fn"
    ):
        mech.fit((X, Y), ["a", "a", "b", "b", "c", "c"])


def test_a_non_finite_output_on_the_whole_data_is_still_fn_data():
    x = X.copy()
    x[0, 0] = np.nan
    mech = DSIMechanism(lambda rows: rows.mean(axis=0), epsilon=1.0, delta=1e-5)
    with pytest.raises(InputError, match=r"^fn\(data\): expected finite values"):
        mech.fit(x, [0, 0, 1, 1, 2, 2])


def _ulp_fn(rows):
    # the second coordinate is 0.1 up to ulps that depend on how many rows there are
    return np.array([rows.mean(), np.sum(np.full(len(rows), 0.1)) / len(rows)])


def test_an_ulp_change_riding_on_a_larger_one_gets_no_noise_as_the_docs_say():
    """docs/privacy-dsi.md (Limits): the accepted part outside the span is released exactly, so
    an ulp-level change there tells U from U_i; rounding fn's output removes it."""
    x, groups = np.array([0.0, 1, 2, 7, 8, 9]), np.array([0, 0, 0, 2, 2, 2])
    mech = DSIMechanism(_ulp_fn, epsilon=1.0, delta=1e-5).fit(x, groups)
    assert mech.constrained_.all() and mech.covariance_.rank == 1
    noises = [mech.release(random_state=seed) - mech.output_ for seed in range(50)]
    seen = {float((mech.output_ + noise)[1]) for noise in noises}
    for g in (0, 2):  # the same draws released from U without group g: never the same value
        other = _ulp_fn(x[groups != g])
        assert seen.isdisjoint({float((other + noise)[1]) for noise in noises})
    rounded = DSIMechanism(lambda rows: np.round(_ulp_fn(rows), 12), epsilon=1.0, delta=1e-5)
    assert not rounded.fit(x, groups).differences_[:, 1].any()


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_sparse_data_gives_the_dense_differences(fmt):
    """A SciPy sparse matrix (TF-IDF features, say) was refused: 'expected records indexed by
    row (an array, ...), got an array of shape (6, 2)'."""
    from scipy import sparse

    def fn(data):
        x, y = data
        return np.asarray(x.T @ y).ravel() if sparse.issparse(x) else x.T @ y

    groups = [0, 0, 1, 1, 2, 2]
    dense = DSIMechanism(fn, epsilon=1.0, delta=1e-5).fit((X, Y), groups)
    mech = DSIMechanism(fn, epsilon=1.0, delta=1e-5)
    mech.fit((sparse.csr_matrix(X).asformat(fmt), Y), groups)
    np.testing.assert_allclose(mech.differences_, dense.differences_)
    alone = DSIMechanism(lambda x: np.asarray(x.sum(axis=0)).ravel(), epsilon=1.0, delta=1e-5)
    assert alone.fit(sparse.csr_matrix(X).asformat(fmt), groups).differences_.shape == (3, 2)
