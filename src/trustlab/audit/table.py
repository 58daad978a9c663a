"""The audited table: read it, check its columns, choose the features, drop unusable rows."""

from __future__ import annotations

import logging
import os
import shlex
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from trustlab._checks import repeated
from trustlab.errors import InputError

__all__ = [
    "DEFAULT_DATASET",
    "AuditTable",
    "load_table",
    "class_labels",
    "check_classes_and_groups",
    "check_class_values",
    "check_predicted_labels",
    "usable_features",
    "imputation_note",
    "split_rows",
]

DEFAULT_DATASET = "chile"
logger = logging.getLogger("trustlab.audit")


@dataclass
class AuditTable:
    """The table to audit, after checks: rows with a label and a group (and prediction).

    ``row_ids`` holds each kept row's index in the input table (for a file: 0 is the first data
    row), so predictions can be joined back to it.
    """

    frame: pd.DataFrame
    name: str
    label: str
    group: str
    features: list[str]
    pred: str | None
    notes: list[str]
    row_ids: np.ndarray


def load_table(
    data, label, group, pred, group_as_feature, encoding=None, exclude=(), trained=True
) -> AuditTable:
    """Read ``data`` and check the label, group and prediction columns; ``exclude`` names
    columns the models must not use. ``trained``: whether the audit trains models on the
    features (the default models); only then is a column that looks like a row id noted (with
    the exclude that leaves it out): a pred column or a given model trains nothing."""
    label, group, pred = (_text_name(c) for c in (label, group, pred))
    exact = [c for c in (label, group, pred) if isinstance(c, str)]
    frame, name, dataset = _read_data(data, encoding, exact)
    frame = _without_pd_na(frame)
    if dataset is not None:
        label = dataset.label if label is None else label
        group = dataset.protected[0] if group is None else group
    for option, value in (("label", label), ("group", group)):
        if value is None:
            raise InputError.bad(option, f"the name of the {option} column of the table", None)
    _check_columns(frame, label=label, group=group, pred=pred)
    if group == label:
        raise InputError.bad("group", "a column other than the label column", group)
    if pred is not None and pred in (label, group):
        raise InputError.bad("pred", "a column other than the label and group columns", pred)
    features = _feature_columns(frame, dataset, label, group, pred, group_as_feature)
    features, index_notes = _without_row_index(frame, features)
    features, exclude_notes = _excluded(frame, features, exclude, (label, group, pred))
    index_notes += exclude_notes + (_row_id_notes(frame, features) if trained else [])
    row_ids = frame.index.to_numpy()
    required = [c for c in (label, group, pred) if c is not None]
    frame, kept, notes = _drop_missing(frame, required)
    if trained:  # sklearn's raw ValueError / TypeError escaped the CLI (exit 1)
        _check_features(frame, features)
    frame = _booleans_as_bool(frame, required)
    frame = _whole_floats_as_int(frame, required)
    frame = _times_as_text(frame, required)
    notes += index_notes + _kept_missing_words(frame, required)
    for note in _many_valued_notes(frame, label, group):  # said now too: such audits run long
        logger.warning("%s", note)
        notes.append(note)
    for option, column in (("label", label), ("group", group)):
        _check_one_kind(frame[column].to_numpy(), option)
    check_class_values(frame[label].to_numpy(), "label")
    return AuditTable(frame, name, label, group, features, pred, notes, row_ids[kept])


def _read_data(data, encoding, exact_columns=()):
    """(frame, display name, bundled Dataset or None). In a CSV file, only an empty cell of the
    ``exact_columns`` (label, group, pred) is missing: a class or group "NA" or "None" is kept."""
    from trustlab.data import list_datasets, load_dataset

    if data is None:
        data = DEFAULT_DATASET
    if isinstance(data, pd.DataFrame):
        return _text_columns(data.copy()), "data frame", None
    if not isinstance(data, (str, os.PathLike)):
        raise InputError.bad("data", "None, a dataset name, a file path or a DataFrame", data)
    path = Path(data)
    if path.is_file():
        from trustlab.data.tables import read_table

        frame = read_table(path, name="data", encoding=encoding, exact_columns=exact_columns)
        return frame, path.name, None
    names = [info["name"] for info in list_datasets()]
    if isinstance(data, str) and data.lower() in names:
        dataset = load_dataset(data)
        return dataset.frame, dataset.name, dataset
    raise InputError.bad(
        "data",
        f"a bundled dataset name ({', '.join(names)}) or an existing CSV or Parquet file",
        str(data),
    )


def _text_name(column):
    """A column named by a whole number (``group=2`` of a table built from an array) as the
    text :func:`_text_columns` makes of its name."""
    if isinstance(column, (int, np.integer)) and not isinstance(column, (bool, np.bool_)):
        return str(column)
    return column


def _text_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its column names as text (a DataFrame built from an array names them 0, 1,
    ...; the overview failed joining them), refused when two columns share a name (selecting one
    gave a table, and the audit an AttributeError)."""
    names = [str(c) for c in frame.columns]
    if len(set(names)) < len(names):
        twice = ", ".join(map(repr, repeated(names)))
        raise InputError(
            f"data: expected distinct column names, got {twice} more than once", argument="data"
        )
    frame.columns = names
    return frame


def _without_pd_na(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its nullable boolean and string columns (Parquet's, whose missing cell is
    ``pd.NA``) as object columns holding NaN: scikit-learn's imputers compare cells with
    ``x != x``, which ``pd.NA`` refuses ("boolean value of NA is ambiguous")."""
    nullable = [
        c
        for c in frame.columns
        if isinstance(frame[c].dtype, pd.BooleanDtype)
        or (isinstance(frame[c].dtype, pd.StringDtype) and frame[c].dtype.na_value is pd.NA)
    ]
    if not nullable:
        return frame
    frame = frame.copy()
    for c in nullable:
        frame[c] = frame[c].astype(object).where(frame[c].notna(), np.nan)
    return frame


def _check_columns(frame: pd.DataFrame, **columns: str | None) -> None:
    from trustlab.data.tables import require_columns

    require_columns(frame, columns)


def _feature_columns(frame, dataset, label, group, pred, group_as_feature) -> list[str]:
    excluded = {label, pred}
    if dataset is not None:
        features = [c for c in dataset.features if c not in excluded]
    else:
        features = [c for c in frame.columns if c not in excluded and c != group]
    if group_as_feature is True and group not in features:
        features.append(group)
    elif group_as_feature is False and group in features:
        features.remove(group)
    return features


def _without_row_index(frame: pd.DataFrame, features: list[str]):
    """(features, notes) without a row index written as data: an unnamed first column (pandas
    reads the empty header cell of ``DataFrame.to_csv()`` as "Unnamed: 0") holding a different
    whole number on every row. As a feature it would tell the models the row's position, which
    on sorted data is the label."""
    if frame.shape[1] == 0:
        return features, []
    first = frame.columns[0]
    values = frame.iloc[:, 0]
    unnamed = isinstance(first, str) and (first.strip() == "" or first.startswith("Unnamed: "))
    whole = pd.api.types.is_integer_dtype(values) and not pd.api.types.is_bool_dtype(values)
    if first not in features or not unnamed or not whole:
        return features, []
    if values.isna().any() or not values.is_unique:
        return features, []
    note = (
        f"Column {first!r} was left out of the features as a row index: it is unnamed and holds "
        "a different whole number on every row (the index DataFrame.to_csv() writes)."
    )
    return [c for c in features if c != first], [note]


def _excluded(frame: pd.DataFrame, features: list, exclude, taken) -> tuple[list, list[str]]:
    """(features without ``exclude``, a note naming them): each must be a column of the data
    other than the label, group and pred columns."""
    names = [_text_name(c) for c in exclude]
    if not names:
        return features, []
    columns = {str(c): c for c in frame.columns}
    for name in names:
        if not isinstance(name, str) or name not in columns:
            raise InputError.bad("exclude", "columns of the data", name)
        if name in taken:
            raise InputError.bad("exclude", "columns other than the label, group and pred", name)
    twice = repeated(names)
    if twice:
        raise InputError.bad("exclude", "each column once", twice[0])
    kept = [c for c in features if str(c) not in names]
    return kept, [f"Columns left out of the features as asked (exclude): {', '.join(names)}."]


def _row_id_notes(frame: pd.DataFrame, features: list) -> list[str]:
    """A note on feature columns that hold a different whole number on every row (20 rows or
    more), as a row id does: as a feature an id tells the models a row's position, which on
    sorted data is the label; only the user knows whether it is one."""
    if len(frame) < 20:
        return []
    ids = [
        str(c)
        for c in features
        if pd.api.types.is_integer_dtype(frame[c])
        and not pd.api.types.is_bool_dtype(frame[c])
        and frame[c].notna().all()
        and frame[c].is_unique
    ]
    return [
        f"Column {c!r} holds a different whole number on every row, as a row id does, and is "
        f"a feature of the models: if it identifies rows, leave it out (--exclude "
        f"{shlex.quote(c)})."
        for c in ids
    ]


#: Cells pandas reads as missing by default, kept as values in a text label, group or pred column.
_MISSING_WORDS = ("NA", "N/A", "n/a", "NaN", "nan", "None", "null", "NULL", "<NA>", "#N/A", "-nan")


def _kept_missing_words(frame: pd.DataFrame, columns: list[str]) -> list[str]:
    """A note per text column that holds a word pandas would read as missing: it was kept as a
    class or group, which the user should know in case it meant a missing value."""
    notes = []
    for column in dict.fromkeys(columns):
        values = frame[column]
        if pd.api.types.is_numeric_dtype(values):
            continue
        found = values[values.isin(_MISSING_WORDS)].value_counts()
        found = found[found > 0]  # a categorical column counts each of its categories, even at 0
        if len(found):
            words = ", ".join(f"{w!r} ({n} rows)" for w, n in found.items())
            notes.append(
                f"Column {column!r} holds {words}, kept as a value of its own; if it means a "
                "missing value, leave those cells empty."
            )
    return notes


#: More whole-number classes than this in a label, or groups than this (with fewer than
#: ``_ROWS_PER_GROUP`` rows each on average), earn a note: a measurement or count read as
#: classes, or an ID read as groups.
_MANY_VALUES = 20
_ROWS_PER_GROUP = 5


def _many_valued_notes(frame: pd.DataFrame, label: str, group: str) -> list[str]:
    """Notes on a label of many whole numbers (a regression target audited as classes) and on
    an ID-like group column (a value on almost every row: groups of a row or two)."""
    notes = []
    y = frame[label]
    n_classes = y.nunique()
    if y.dtype.kind in "iuf" and n_classes > _MANY_VALUES:
        notes.append(
            f"Label {label!r} holds {n_classes:,} different whole numbers, each audited as a "
            "class of its own. If it is a measurement or a count (a regression target), this "
            "classification audit does not fit it: bin it into a few classes first."
        )
    n_groups = frame[group].nunique()
    if n_groups > _MANY_VALUES and len(frame) < _ROWS_PER_GROUP * n_groups:
        notes.append(
            f"Group column {group!r} holds {n_groups:,} different values in {len(frame):,} "
            "rows, as an ID would: DCP and the group metrics compare groups, and groups of a "
            "row or two give only noise. Audit by a column of a few groups (or bin this one)."
        )
    return notes


def _booleans_as_bool(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """``frame`` with each of ``columns`` that holds only True and False as a bool column. A
    True/False column with an empty cell is read as objects; once that row is dropped,
    scikit-learn still calls an object array of booleans an "unknown" target and refuses it."""
    for column in dict.fromkeys(columns):
        values = frame[column]
        if values.dtype == object and pd.api.types.infer_dtype(values) == "boolean":
            frame[column] = values.astype(bool)
    return frame


def _whole_floats_as_int(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """``frame`` with each of ``columns`` of floats that are all whole numbers as integers: a
    column of codes with an empty cell is read as floats, and once that row is dropped its
    groups or classes would show as 1.0, 2.0 in the report and predictions.csv."""
    for column in dict.fromkeys(columns):
        values = frame[column]
        if values.dtype.kind == "f" and len(values):
            numbers = values.to_numpy()
            exact = np.isfinite(numbers).all() and np.abs(numbers).max() < 2**53
            if exact and (numbers == np.round(numbers)).all():
                frame[column] = numbers.astype(np.int64)
    return frame


def _times_as_text(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """``frame`` with each of ``columns`` of dates, durations, periods or intervals (pd.cut's
    bins), or of categories of them (a DataFrame's or Parquet's), as the text predictions.csv
    writes (``2020-01-01``, ``(0, 30]``): report.json named one date group three ways
    ('2020-01-01T00:00:00.000000' in the overview, '2020-01-01 00:00:00' in the group
    metrics, '2020-01-01T00:00:00' in DCP's inputs); a period or interval group failed the
    overview and fairness sections (not a JSON value)."""
    for column in dict.fromkeys(columns):
        values = frame[column]
        if isinstance(values.dtype, pd.CategoricalDtype):
            categories = values.cat.categories
            if _is_time_or_span(categories.dtype):
                texts = categories.astype(str)
                frame[column] = values.cat.rename_categories(texts).astype(object)
        elif _is_time_or_span(values.dtype):
            frame[column] = values.astype(str).astype(object)
    return frame


def _is_time_or_span(dtype) -> bool:
    spans = (pd.DatetimeTZDtype, pd.PeriodDtype, pd.IntervalDtype)
    return isinstance(dtype, spans) or dtype.kind in "mM"


def _drop_missing(frame: pd.DataFrame, columns: list[str]):
    """(frame without rows missing a required value, positions kept, notes)."""
    missing = frame[columns].isna().any(axis=1).to_numpy()
    n_rows, notes = len(frame), []
    if missing.any():
        per_column = ", ".join(
            f"{c}: {int(frame[c].isna().sum())}" for c in columns if frame[c].isna().any()
        )
        notes.append(
            f"Dropped {int(missing.sum())} of {len(frame)} rows with a missing value in a "
            f"required column ({per_column})."
        )
        frame = frame.loc[~missing]
    if len(frame) == 0:  # a header-only file said "got 'none'"
        got = "a table without rows"
        if n_rows:  # which column is empty: an all-missing --pred is not the label's fault
            got = f"none among its {n_rows:,} rows (missing values: {per_column})"
        what = (
            "a label and a group value"
            if len(columns) == 2
            else "a label, group and prediction value"
        )
        raise InputError(f"data: expected rows with {what}, got {got}", argument="data")
    return frame.reset_index(drop=True), np.flatnonzero(~missing), notes


def class_labels(*arrays: np.ndarray, argument: str = "pred") -> np.ndarray:
    """The sorted labels of the true labels and every prediction (an InputError naming
    ``argument`` when they cannot be compared, e.g. numbers against text)."""
    try:
        return np.unique(np.concatenate([np.asarray(a) for a in arrays if len(a)]))
    except TypeError as exc:  # e.g. numbers in the label column and strings in the predictions
        kinds = sorted({type(v).__name__ for a in arrays for v in np.asarray(a, dtype=object)})
        raise InputError.bad(
            argument,
            "predictions of the same kind as the labels",
            f"a mix of {', '.join(kinds)}",
        ) from exc


def _check_one_kind(values: np.ndarray, argument: str) -> None:
    """An InputError naming ``argument`` when ``values`` cannot be sorted (a DataFrame column
    mixing numbers and text: numpy's TypeError escaped, or the label's named ``pred``)."""
    try:
        np.unique(values)
    except TypeError as exc:
        kinds = sorted({type(v).__name__ for v in np.asarray(values, dtype=object)})
        raise InputError.bad(
            argument, "values of one kind (all text or all numbers)", f"a mix of {', '.join(kinds)}"
        ) from exc


def _check_shared_classes(y: np.ndarray, pred: np.ndarray, argument: str) -> None:
    """Refuse predictions holding none of the label's classes: other names for them, as
    'Approved' for 'approved' (audited, every prediction was an error: accuracy 0 and fairness
    rates of the misnamed classes)."""
    classes = pd.unique(pd.Series(np.asarray(y, dtype=object))).tolist()
    predicted = pd.unique(pd.Series(np.asarray(pred, dtype=object))).tolist()
    if classes and predicted and not any(v in set(classes) for v in predicted):
        raise InputError(
            f"{argument}: expected predictions among the label's classes "
            f"({_examples(sorted(classes, key=str), 5)}), got none of them: "
            f"{_examples(sorted(predicted, key=str), 5)} (check that both use the same class names)",
            argument=argument,
        )


def check_classes_and_groups(labels: np.ndarray, groups: np.ndarray, where: str = "") -> None:
    """At least 2 classes and 2 groups; ``where`` says which rows (e.g. " (the 50 test rows)")."""
    if len(labels) < 2:
        raise InputError(
            f"label: expected at least 2 classes, got only {labels.tolist()!r}", argument="label"
        )
    if len(np.unique(groups)) < 2:
        raise InputError(
            f"group: expected at least 2 groups in the audited rows{where}, as DCP compares "
            f"groups, got only {np.unique(groups).tolist()!r}",
            argument="group",
        )


def _fractional(values: np.ndarray) -> list:
    """The distinct values of ``values`` that are numbers with a fractional part (scores)."""
    values = np.asarray(values)
    if values.dtype.kind in "biuUSM":
        return []
    if values.dtype.kind == "f":
        whole = np.isfinite(values) & (values == np.floor(values))
        return list(pd.unique(values[~whole & ~np.isnan(values)]))
    out = []
    for v in pd.unique(pd.Series(np.asarray(values, dtype=object))):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (float, np.floating)):
            continue
        if not np.isfinite(v) or not float(v).is_integer():
            out.append(v)
    return out


def _examples(values: list, n: int = 3) -> str:
    def show(v):
        v = v.item() if isinstance(v, np.generic) else v
        return f"{v:.4g}" if isinstance(v, float) else repr(v)

    return ", ".join(show(v) for v in values[:n])


def check_class_values(values: np.ndarray, argument: str, labels=None) -> None:
    """Refuse a column of continuous numbers where class labels are expected.

    Class labels may be text, booleans or integers (also stored as floats: ``1.0``); a number
    with a fractional part (``0.37``) is a score or a measurement, not a class. With
    ``labels`` (the true labels; ``values`` are then predictions), values holding none of their
    classes are refused too.
    """
    fractional = _fractional(values)
    if fractional:
        n = len(pd.unique(pd.Series(np.asarray(values, dtype=object))))
        raise InputError(
            f"{argument}: expected class labels (text or whole numbers), got {n} distinct "
            f"values, {len(fractional)} of them with a fractional part, e.g. "
            f"{_examples(fractional)} (a continuous column is not a classification label)",
            argument=argument,
        )
    if labels is not None:
        _check_shared_classes(labels, values, argument)


def check_predicted_labels(y: np.ndarray, pred: np.ndarray, argument: str = "pred") -> None:
    """Refuse predictions that are not class labels: scores or probabilities.

    A prediction column is refused when it holds a number with a fractional part, or when it
    holds more values the label column lacks than the label column has classes. A few predicted
    classes that the audited labels lack (a small test set) are accepted.
    """
    classes = set(pd.unique(pd.Series(np.asarray(y, dtype=object))).tolist())
    predicted = pd.unique(pd.Series(np.asarray(pred, dtype=object))).tolist()
    fractional = _fractional(np.asarray(predicted, dtype=object))
    new = [v for v in predicted if v not in classes]
    if fractional or len(new) > len(classes):
        odd = fractional or new
        kind = "with a fractional part" if fractional else "that the label column lacks"
        raise InputError(
            f"{argument}: expected predicted class labels (values among the label column's "
            f"{len(classes)} classes, at most as many others), got {len(predicted)} distinct "
            f"values, {len(odd)} of them {kind}, e.g. {_examples(odd)} (a score or probability "
            "is not a predicted label: threshold it first)",
            argument=argument,
        )
    _check_shared_classes(y, pred, argument)


def usable_features(X: pd.DataFrame) -> tuple[list[str], list[str]]:
    """(columns to train on, notes): columns that are empty or hold one value are left out, and
    so are date/time columns.

    A column with no observed value (e.g. the empty column a trailing comma gives) or a single
    observed value carries no information; models and imputers cannot use it. A column of
    dates and times (datetime64, e.g. from Parquet) is neither a number nor a category to the
    models: the note asks for it as numbers (days since a start, a year) to be used.
    """
    dates = [
        str(c)
        for c in X.columns
        if pd.api.types.is_datetime64_any_dtype(X[c]) or pd.api.types.is_timedelta64_dtype(X[c])
    ]
    empty = [str(c) for c in X.columns if str(c) not in dates and X[c].notna().sum() == 0]
    constant = [
        str(c)
        for c in X.columns
        if str(c) not in dates and X[c].notna().sum() > 0 and X[c].nunique(dropna=True) < 2
    ]
    left_out = set(dates) | set(empty) | set(constant)
    kept = [c for c in X.columns if str(c) not in left_out]
    described = [f"{c} (empty)" for c in empty] + [f"{c} (one value)" for c in constant]
    notes = []
    if described:
        notes.append(
            "Feature columns left out of the models, as they hold no information in the "
            f"training rows: {', '.join(described)}."
        )
    if dates:
        notes.append(
            f"Date/time columns left out of the models: {', '.join(dates)}; to use one, give it "
            "as numbers (e.g. days since a start date, or the year)."
        )
    return kept, notes


def _check_features(frame: pd.DataFrame, features: list[str]) -> None:
    """An InputError naming ``data`` and the column when a feature the default models train on
    holds infinity (a ratio's division by zero) or mixes text and numbers (a DataFrame's)."""
    for c in features:
        values, got = frame[c].dropna(), None
        n = int(np.isinf(values).sum()) if pd.api.types.is_float_dtype(values) else 0
        if n and values.nunique() > 1:  # one value (inf only): usable_features leaves it out
            got = f"infinity in {c!r} ({n:,} row{'s' if n > 1 else ''})"
        elif values.dtype == object and pd.api.types.infer_dtype(values) != "string":
            if len({isinstance(v, str) for v in values}) > 1:  # not all text
                got = f"{c!r} mixing {', '.join(sorted({type(v).__name__ for v in values}))}"
        if got:
            raise InputError(
                f"data: expected feature columns of finite numbers or of text, got {got}: leave "
                f"such cells empty (imputed) or leave the column out (--exclude {shlex.quote(c)})",
                argument="data",
            )


def imputation_note(X: pd.DataFrame) -> list[str]:
    gaps = {c: int(n) for c, n in X.isna().sum().items() if n}
    if not gaps:
        return []
    listed = ", ".join(f"{c}: {n}" for c, n in gaps.items())
    return [f"Missing feature values were imputed (median or most frequent value): {listed}."]


def split_rows(y: np.ndarray, g: np.ndarray, test_size: float, seed: int):
    """(train rows, test rows, notes, strategy): stratified by label and group where every pair
    has 2 or more rows (so both parts hold every group in its share), else by label, else not at
    all; ``strategy`` says which ("label and group", "label" or "none")."""
    from sklearn.model_selection import train_test_split

    rows = np.arange(len(y))
    pairs = pd.DataFrame({"y": y, "g": g}).groupby(["y", "g"], sort=False).ngroup().to_numpy()
    strata = [(pairs, [], "label and group"), (y, [_LABEL_ONLY], "label")]
    for key, note, strategy in strata:
        _, counts = np.unique(key, return_counts=True)
        if counts.min() < 2:
            continue
        try:
            train, test = train_test_split(
                rows, test_size=test_size, stratify=key, random_state=seed
            )
            return np.sort(train), np.sort(test), note, strategy
        except ValueError:
            pass  # too few rows for a stratified split of this size: fall back below
    try:
        train, test = train_test_split(rows, test_size=test_size, random_state=seed)
    except ValueError as exc:
        raise InputError.bad(
            "test_size", f"a split of {len(y)} rows into two parts", test_size
        ) from exc
    note = "The train/test split is not stratified: some class has too few rows for that."
    return np.sort(train), np.sort(test), [note], "none"


_LABEL_ONLY = (
    "The train/test split is stratified by label only: some label and group pair has too few "
    "rows to stratify by both."
)
