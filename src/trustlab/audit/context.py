"""What every report section receives: the data split, the fitted models and their predictions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from trustlab._checks import check_probability
from trustlab.audit.table import check_classes_and_groups
from trustlab.errors import InputError

if TYPE_CHECKING:  # only in annotations: `trustlab --help` need not load pandas
    import pandas as pd

__all__ = ["AuditContext", "AuditPlan", "audit_mode", "check_test_groups"]

#: the share of rows the default models leave for the audit when ``test_size`` is not given
DEFAULT_TEST_SIZE = 0.5


def audit_mode(pred, model, test_size, group_as_feature, exclude=()) -> tuple[str, float]:
    """The audit's mode (``"predictions"``, ``"model"`` or ``"zoo"``) and its test share.

    ``pred`` and ``model`` exclude each other; ``test_size`` is the default models' held-out
    share only (a ``pred`` column or a ``model`` is audited on every row), ``group_as_feature``
    needs a model that reads features (none is trained for a ``pred`` column) and ``exclude``
    a model trained here: each given where it has no effect is refused rather than silently
    ignored.
    """
    if pred is not None and model is not None:
        raise InputError.bad("pred", "no column with a model (audit one or the other)", pred)
    if group_as_feature is not None and not isinstance(group_as_feature, bool):
        raise InputError.bad("group_as_feature", "True, False or None", group_as_feature)
    if pred is not None and group_as_feature is not None:
        raise InputError.bad(
            "group_as_feature",
            f"None with a pred column (no model is trained: {pred!r} is audited as it is)",
            group_as_feature,
        )
    mode = "predictions" if pred is not None else ("model" if model is not None else "zoo")
    if isinstance(exclude, str) or not isinstance(exclude, (list, tuple)):
        raise InputError.bad("exclude", "a list of column names", exclude)
    if exclude and mode != "zoo":
        why = (
            "a pred column (no model is trained)"
            if mode == "predictions"
            else "a model (it reads its own features)"
        )
        raise InputError.bad("exclude", f"no columns to leave out with {why}", exclude)
    if test_size is not None and mode != "zoo":
        given = "a pred column" if mode == "predictions" else "a model"
        raise InputError.bad(
            "test_size", f"no held-out share with {given} (every row is audited)", test_size
        )
    return mode, check_probability(
        DEFAULT_TEST_SIZE if test_size is None else test_size, "test_size"
    )


@dataclass
class AuditContext:
    """The audited data, models and predictions, shared by all report sections.

    Attributes
    ----------
    dataset : str
        A bundled dataset name or the file name of the user's table.
    label, group : str
        The label column and the protected-group column.
    labels : numpy.ndarray
        The sorted class labels: every value of the true labels and of all predictions.
    feature_names : list of str
        The raw feature columns (before preprocessing).
    X_train, X_test : pandas.DataFrame
        Raw features. ``X_train`` has no rows when a given model or given predictions are
        audited: then the whole table is the test set.
    y_train, y_test, g_train, g_test : numpy.ndarray
        Labels and groups of the two parts.
    models : dict
        Fitted estimators by name. The default zoo holds scikit-learn Pipelines with a
        ColumnTransformer step ``"prep"`` and the estimator step ``"model"``; a model loaded from
        the user's file is kept as it is (it may not have this shape). Empty when auditing
        given predictions.
    predictions : dict of numpy.ndarray
        Predicted labels on ``X_test``, by model name.
    probabilities : dict of numpy.ndarray
        ``(n_test, K)`` class probabilities with columns in ``labels`` order; only for models with
        ``predict_proba``.
    random_state : int
        The seed every section passes on to stochastic methods.
    mode : str
        ``"zoo"`` (default models trained here), ``"model"`` (the user's model) or
        ``"predictions"`` (the user's predictions).
    split : str or None
        How the zoo's train/test split was stratified: ``"label and group"``, ``"label"`` or
        ``"none"`` (not stratified); None when nothing was split (a given model or predictions).
    notes : list of str
        What was done to the data on the way (rows dropped, imputation, ...), for the report.
    rows_test : numpy.ndarray or None
        Each audited row's index in the input table (for a file, 0 is the first data row), in
        the order of ``X_test``; None when unknown.
    files : dict
        What the audit saved beside the report, relative to the output directory:
        ``{"predictions": "predictions.csv", "models": {name: "models/<name>.skops"}}``
        (empty until the files are written).
    participation : ParticipationAssessment or None
        The scored participation assessment of the answers files given to the audit
        (:func:`trustlab.governance.assess`), or None without any.
    """

    dataset: str
    label: str
    group: str
    labels: np.ndarray
    feature_names: list[str]
    X_train: pd.DataFrame
    X_test: pd.DataFrame
    y_train: np.ndarray
    y_test: np.ndarray
    g_train: np.ndarray
    g_test: np.ndarray
    models: dict[str, Any] = field(default_factory=dict)
    predictions: dict[str, np.ndarray] = field(default_factory=dict)
    probabilities: dict[str, np.ndarray] = field(default_factory=dict)
    random_state: int = 0
    mode: str = "zoo"
    split: str | None = None
    notes: list[str] = field(default_factory=list)
    rows_test: np.ndarray | None = None
    files: dict[str, Any] = field(default_factory=dict)
    participation: Any = None

    @property
    def groups(self) -> np.ndarray:
        """The sorted protected groups present in the test set."""
        return np.unique(self.g_test)

    @property
    def n_train(self) -> int:
        return len(self.y_train)

    @property
    def n_test(self) -> int:
        return len(self.y_test)

    def __repr__(self) -> str:
        return (
            f"AuditContext(dataset={self.dataset!r}, label={self.label!r}, group={self.group!r}, "
            f"n_train={self.n_train}, n_test={self.n_test}, mode={self.mode!r}, "
            f"models={list(self.predictions)})"
        )


@dataclass(frozen=True)
class AuditPlan:
    """What an audit is about to do, known once its input is checked (see ``run_audit(plan=)``).

    Attributes
    ----------
    dataset : str
    mode : str
        ``"zoo"``, ``"model"`` or ``"predictions"``.
    models : list of str
        The models to train (zoo) or audit.
    n_train, n_test : int
        Rows to train the zoo on (0 otherwise) and rows to audit.
    sections : list of str
        The report sections to build.
    """

    dataset: str
    mode: str
    models: list[str]
    n_train: int
    n_test: int
    sections: list[str]

    @property
    def rows(self) -> int:
        """Every row the audit uses (trained on or audited)."""
        return self.n_train + self.n_test

    def describe(self) -> str:
        """``"auditing chile: training 3 models on 1,266 rows, then the report (overview,
        fairness, ...) on 1,266 rows"``."""
        n = len(self.models)
        what = {
            "zoo": f"training {n} model{'s' * (n != 1)} on {self.n_train:,} rows, then ",
            "model": f"model {', '.join(self.models)}: ",
            "predictions": f"the predictions in {', '.join(self.models)}: ",
        }[self.mode]
        sections = ", ".join(self.sections) or "no sections"
        return f"auditing {self.dataset}: {what}the report ({sections}) on {self.n_test:,} rows"


def check_test_groups(labels, groups: np.ndarray, test: np.ndarray, test_size: float) -> None:
    """2 or more groups in the test rows (DCP compares groups): an InputError naming
    ``test_size`` when every group of the table has 2 or more rows (the held-out share was too
    small to hold them), else, a group of one row, naming ``group``; 2 or more classes."""
    held = np.unique(groups[test])
    smallest = int(np.unique(groups, return_counts=True)[1].min())
    if len(held) < 2 and smallest >= 2:
        raise InputError(
            "test_size: expected a held-out share whose test rows hold 2 or more groups, as DCP "
            f"compares groups, got {test_size} (the {len(test):,} test rows hold only "
            f"{held.tolist()!r}; the smallest group has {smallest:,} of {len(groups):,} rows)",
            argument="test_size",
        )
    check_classes_and_groups(labels, groups[test], f" (the {len(test)} test rows)")
