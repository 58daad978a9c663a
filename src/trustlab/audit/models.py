"""The default model zoo, its preprocessing, and secure loading of the user's model file.

Model files are loaded with skops, which rebuilds objects without running arbitrary code. Only
types from scikit-learn, NumPy and SciPy (and XGBoost / LightGBM when installed) are trusted
automatically; anything else must be named by the user. Pickle and joblib files can run any code
when loaded, so they are read only when the caller says it trusts the file.
"""

from __future__ import annotations

import os
import shlex
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from trustlab._model_files import (  # noqa: F401  (trusted_library_modules is re-exported)
    PICKLE_SUFFIXES,
    SKOPS_SUFFIXES,
    load_pickle,
    load_skops,
    trusted_library_modules,
)
from trustlab.errors import InputError

if TYPE_CHECKING:  # pandas loads on first use: `trustlab --help` need not pay for it
    import pandas as pd

__all__ = [
    "ZOO_NAMES",
    "ZOO_TREE_ENSEMBLES",
    "default_zoo",
    "make_preprocessor",
    "make_pipeline",
    "load_classifier",
    "predict_labels",
    "aligned_probabilities",
    "model_columns",
]

ZOO_NAMES = ("logistic_regression", "random_forest", "gradient_boosting")
#: The zoo's tree ensembles (those FastPD explains), known before any model is fitted.
ZOO_TREE_ENSEMBLES = ("random_forest", "gradient_boosting")


def default_zoo(random_state: int = 0) -> dict[str, Any]:
    """The unfitted default models: logistic regression, a random forest, gradient boosting."""
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression

    return {
        "logistic_regression": LogisticRegression(max_iter=1000),
        "random_forest": RandomForestClassifier(
            n_estimators=200, min_samples_leaf=5, random_state=random_state
        ),
        "gradient_boosting": HistGradientBoostingClassifier(random_state=random_state),
    }


#: One-hot columns per categorical feature in the zoo's preprocessing; rarer values share one.
MAX_CATEGORIES = 50


def categorical_columns(X: pd.DataFrame) -> list[str]:
    """Columns treated as categories: every non-numeric column, booleans included."""
    import pandas as pd

    return [
        c
        for c in X.columns
        if not pd.api.types.is_numeric_dtype(X[c]) or pd.api.types.is_bool_dtype(X[c])
    ]


def make_preprocessor(X: pd.DataFrame):
    """One-hot encode categorical columns, standardise numeric ones, impute missing values.

    Missing categories get the most frequent value and missing numbers the median, so no row is
    lost for a gap in a feature. A column of more than ``MAX_CATEGORIES`` values keeps the most
    frequent ones and puts the rest in one "infrequent" column; categories unseen in training go
    there too (or, in a column without rare values, are ignored) at prediction time.
    """
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler

    categorical = categorical_columns(X)
    numeric = [c for c in X.columns if c not in categorical]
    _check_scalable(X, numeric)
    categorical_steps = Pipeline(
        [
            # as objects: SimpleImputer refuses an array of booleans only (a True/False column)
            (
                "as_object",
                FunctionTransformer(
                    np.asarray, kw_args={"dtype": "O"}, feature_names_out="one-to-one"
                ),
            ),
            ("impute", SimpleImputer(strategy="most_frequent")),
            # at most MAX_CATEGORIES columns per text column (the rarer values share one), so
            # the dense one-hot of an id-like column does not grow with the rows
            (
                "onehot",
                OneHotEncoder(handle_unknown="infrequent_if_exist", max_categories=MAX_CATEGORIES),
            ),
        ]
    )
    numeric_steps = Pipeline(
        [("impute", SimpleImputer(strategy="median")), ("scale", StandardScaler())]
    )
    return ColumnTransformer(
        [("categorical", categorical_steps, categorical), ("numeric", numeric_steps, numeric)],
        sparse_threshold=0,  # dense: gradient boosting refuses the sparse one-hot of many values
    )


def _check_scalable(X: pd.DataFrame, numeric: list) -> None:
    """An InputError naming ``data`` and the column when the spread of a numeric feature overflows
    float64 (numbers beyond about 1e154): StandardScaler then divides it by 1, unscaled (logistic
    regression at chance), or, near 1e200, leaves NaN and scikit-learn's raw 'Input X contains
    NaN'."""
    for c in numeric:
        values = np.asarray(X[c], dtype=float)
        values = values[~np.isnan(values)]
        with np.errstate(over="ignore", invalid="ignore"):
            if values.size and not np.isfinite(np.std(values)):
                raise InputError(
                    f"data: expected numeric feature columns StandardScaler can scale, got {c!r} "
                    f"with numbers up to {np.abs(values).max():.3g} (their spread overflows "
                    "float64): rescale the column (divide it by a power of ten) or leave it out "
                    f"(--exclude {shlex.quote(str(c))})",
                    argument="data",
                )


def make_pipeline(estimator, X: pd.DataFrame):
    """``Pipeline([("prep", make_preprocessor(X)), ("model", estimator)])``."""
    from sklearn.pipeline import Pipeline

    return Pipeline([("prep", make_preprocessor(X)), ("model", estimator)])


def load_classifier(
    path: str | os.PathLike,
    *,
    trust_pickle: bool = False,
    trust_types: Iterable[str] = (),
):
    """Load a fitted model from a skops file (or, when trusted, a pickle/joblib file).

    Parameters
    ----------
    path : str or path-like
        A ``.skops`` file, or a ``.pkl`` / ``.pickle`` / ``.joblib`` file.
    trust_pickle : bool, default False
        Read pickle and joblib files. Loading a pickle runs whatever code the file contains:
        only set this for files you made yourself or fully trust.
    trust_types : iterable of str
        Extra fully qualified type names (e.g. ``"mypackage.MyTransformer"``) to trust in a skops
        file, beyond scikit-learn, NumPy and SciPy (and XGBoost / LightGBM when installed).

    Returns
    -------
    The fitted estimator.

    Raises
    ------
    InputError
        The file is missing, has an unknown suffix, is a pickle without ``trust_pickle``, holds
        untrusted types, cannot be read, or is not a fitted classifier.

    Examples
    --------
    >>> import tempfile, skops.io
    >>> from sklearn.linear_model import LogisticRegression
    >>> path = tempfile.mkdtemp() + "/model.skops"
    >>> skops.io.dump(LogisticRegression().fit([[0], [1]], [0, 1]), path)
    >>> load_classifier(path).predict([[1]]).tolist()
    [1]
    """
    path = Path(path)
    if not path.is_file():
        raise InputError.bad("model", "an existing model file", str(path))
    suffix = path.suffix.lower()
    if suffix in SKOPS_SUFFIXES:
        model = load_skops(path, trust_types=trust_types)
    elif suffix in PICKLE_SUFFIXES:
        model = load_pickle(path, trust_pickle=trust_pickle)
    else:
        raise InputError.bad(
            "model",
            "a .skops file (or .pkl, .pickle, .joblib with --trust-pickle, trust_pickle=True "
            "in Python)",
            str(path),
        )
    _check_fitted_classifier(model, path)
    return model


def _check_fitted_classifier(model, path: Path) -> None:
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    if not hasattr(model, "predict"):
        raise InputError.bad("model", "an estimator with a predict method", model)
    try:
        check_is_fitted(model)
    except NotFittedError:
        raise InputError.bad(
            "model", "a fitted estimator", f"an unfitted one in {path.name}"
        ) from None
    except (TypeError, AttributeError):
        # not a scikit-learn estimator: trust that predict works, the call will tell (an object
        # with fit but without scikit-learn's tags is an AttributeError from scikit-learn >= 1.7)
        pass
    _check_classifier_kind(model, "model", f" in {path.name}")


def _check_classifier_kind(model, name: str, where: str = "") -> None:
    """Refuse what scikit-learn's tags call a regressor, clusterer or outlier detector: its
    predictions (cluster ids, whole-number outputs) would be audited as class labels. An estimator
    without tags is trusted, as for the fit check."""
    from sklearn.utils import get_tags

    try:
        kind = get_tags(model).estimator_type
    except Exception:  # no __sklearn_tags__ (another library's model): trust it
        kind = getattr(model, "_estimator_type", None)
    if kind in ("regressor", "clusterer", "outlier_detector", "density_estimator"):
        raise InputError(
            f"{name}: expected a classifier, got a {kind.replace('_', ' ')} "
            f"({type(model).__name__}{where}): its predictions are no class labels",
            argument=name,
        )


def predict_labels(model, X: pd.DataFrame, name: str = "model") -> np.ndarray:
    """``model.predict(X)`` as a 1-D array, with prediction failures named in one line.

    Warnings raised while predicting (feature names, a RuntimeWarning from a transformer) are
    silenced; a failure keeps the first line of the model's message.
    """
    _check_classifier_kind(model, name)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            pred = np.asarray(model.predict(X))
    except Exception as exc:
        mismatch = _column_count_mismatch(model, X)
        if mismatch:
            raise InputError(f"{name}: {mismatch}", argument=name) from exc
        first = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
        raise InputError(
            f"{name}: prediction on the data failed ({type(exc).__name__}: {first})",
            argument=name,
        ) from exc
    if pred.ndim == 2 and pred.shape[1] == 1:
        pred = pred.ravel()
    if pred.shape != (len(X),):
        raise InputError.bad(name, f"one predicted label per row ({len(X)})", pred)
    return pred


def _column_count_mismatch(model, X: pd.DataFrame) -> str:
    """Why a model without column names failed: it was fitted on another number of columns
    (its ``n_features_in_``) than the table gives; "" when that is not it."""
    expected = getattr(model, "n_features_in_", None)
    if getattr(model, "feature_names_in_", None) is not None:
        return ""
    if not isinstance(expected, (int, np.integer)) or expected == X.shape[1]:
        return ""
    return (
        f"the model expects {int(expected)} column{'s' * (expected != 1)}, the table gives "
        f"{X.shape[1]} ({', '.join(map(str, X.columns)) or 'none'}); the model records no "
        "column names, so it gets every column besides the label, group and pred"
    )


def aligned_probabilities(model, X: pd.DataFrame, labels: np.ndarray) -> np.ndarray | None:
    """``predict_proba`` with columns in ``labels`` order, or None when it is not available.

    Labels the model never saw get probability 0. None is also returned when the model knows
    classes outside ``labels`` (its columns would not sum to 1 over ``labels``).
    """
    classes = getattr(model, "classes_", None)
    if not hasattr(model, "predict_proba") or classes is None:
        return None
    index = {label: i for i, label in enumerate(labels.tolist())}
    if any(c not in index for c in np.asarray(classes).tolist()):
        return None
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # as in predict_labels
        proba = np.asarray(model.predict_proba(X), dtype=np.float64)
    aligned = np.zeros((len(X), len(labels)))
    for j, c in enumerate(np.asarray(classes).tolist()):
        aligned[:, index[c]] = proba[:, j]
    return aligned


def model_columns(estimator, frame: pd.DataFrame, features: list[str]) -> list[str]:
    """The columns of ``frame`` to give ``estimator``: those it was fitted on (its
    ``feature_names_in_``, each required) or else ``features``."""
    wanted = getattr(estimator, "feature_names_in_", None)
    if wanted is None:
        return list(features)
    wanted = [str(c) for c in wanted]
    missing = [c for c in wanted if c not in frame.columns]
    if missing:
        raise InputError.bad(
            "model",
            f"data with the columns it was fitted on ({', '.join(wanted)})",
            f"a table without {', '.join(missing)}",
        )
    return wanted
