"""Registry and loader of the real datasets shipped inside the package (see bundled/LICENSES.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

import numpy as np

from trustlab.errors import InputError

if TYPE_CHECKING:  # pandas loads on first use: `trustlab --help` need not pay for it
    import pandas as pd

__all__ = ["Dataset", "load_dataset", "list_datasets"]


@dataclass(frozen=True)
class _Entry:
    file: str
    label: str
    protected: tuple[str, ...]
    features: tuple[str, ...]
    description: str
    source: str
    licence: str


_REGISTRY: dict[str, _Entry] = {
    "chile": _Entry(
        file="chile.csv.gz",
        label="vote",
        protected=("region", "sex"),
        features=("population", "age", "income", "statusquo", "sex", "education"),
        description=(
            "Voting intentions in the 1988 Chilean plebiscite (FLACSO/Chile survey): 4-class vote "
            "(A abstain, N no, U undecided, Y yes) with region (C central, M Metropolitan "
            "Santiago area, N north, S south, SA city of Santiago) and sex as protected "
            "attributes; education P primary, S secondary, PS post-secondary. Rows with a "
            "missing vote are dropped; a few feature values are missing."
        ),
        source="R package carData/car, dataset Chile (via pydataset 0.2.0); FLACSO/Chile 1988.",
        licence="GPL (>= 2), as the R package carData",
    ),
    "logan": _Entry(
        file="logan.csv.gz",
        label="occupation",
        protected=("race",),
        features=("focc", "education"),
        description=(
            "Intergenerational occupational mobility, General Social Survey 1972-78 (Logan 1983): "
            "5-class occupation with race as protected attribute; focc, the father's occupation, "
            "has the same 5 classes (a square 'predictor' for mobility audits)."
        ),
        source="R package survival, dataset logan (via pydataset 0.2.0); GSS (NORC).",
        licence="LGPL (>= 2), as the R package survival",
    ),
}


@dataclass(frozen=True)
class Dataset:
    """A bundled dataset: the table and what its columns mean.

    Attributes
    ----------
    name : str
    frame : pandas.DataFrame
        The whole table (label, protected attributes and features).
    label : str
        The multiclass target column.
    protected : tuple of str
        Protected-attribute columns; the first is the default group.
    features : tuple of str
        Columns a model may use.
    description, source, licence : str
    """

    name: str
    frame: pd.DataFrame = field(repr=False)
    label: str
    protected: tuple[str, ...]
    features: tuple[str, ...]
    description: str = field(repr=False)
    source: str = field(repr=False)
    licence: str = field(repr=False)

    @property
    def X(self) -> pd.DataFrame:
        """The feature columns."""
        return self.frame[list(self.features)]

    @property
    def y(self) -> np.ndarray:
        """The label as a numpy array."""
        return self.frame[self.label].to_numpy()

    def groups(self, column: str | None = None) -> np.ndarray:
        """The default protected attribute, or the named one, as a numpy array."""
        column = self.protected[0] if column is None else column
        if column not in self.protected:
            raise InputError.bad("column", f"one of the protected columns {self.protected}", column)
        return self.frame[column].to_numpy()

    def info(self) -> dict:
        """A JSON-safe description (no data)."""
        import pandas as pd

        return {
            "name": self.name,
            "rows": int(len(self.frame)),
            "label": self.label,
            "classes": sorted(map(str, pd.unique(self.frame[self.label]))),
            "protected": list(self.protected),
            "features": list(self.features),
            "description": self.description,
            "source": self.source,
            "licence": self.licence,
        }


def load_dataset(name: str) -> Dataset:
    """Load a bundled dataset by name (no network).

    Parameters
    ----------
    name : str
        One of the names in :func:`list_datasets`, e.g. ``"chile"`` or ``"logan"``.

    Returns
    -------
    Dataset

    Examples
    --------
    >>> ds = load_dataset("logan")
    >>> ds.frame.shape
    (838, 4)
    """
    if not isinstance(name, str) or name.lower() not in _REGISTRY:
        expected = "one of " + ", ".join(map(repr, _REGISTRY))
        if isinstance(name, str) and name.lower() == "qm9_carbonyl":  # bundled, but not a table
            expected += (
                " (qm9_carbonyl is a graph dataset: load it with "
                "trustlab.explain.equigx.data.qm9_carbonyl())"
            )
        raise InputError.bad("name", expected, name)
    name = name.lower()
    entry = _REGISTRY[name]
    # A fresh copy each call: callers may modify the frame.
    return Dataset(
        name=name,
        frame=_read(name).copy(),
        label=entry.label,
        protected=entry.protected,
        features=entry.features,
        description=entry.description,
        source=entry.source,
        licence=entry.licence,
    )


@cache
def _read(name: str) -> pd.DataFrame:
    import pandas as pd

    entry = _REGISTRY[name]
    with resources.files("trustlab.data").joinpath("bundled", entry.file).open("rb") as fh:
        frame = pd.read_csv(fh, compression="gzip")
    frame = frame.dropna(subset=[entry.label]).reset_index(drop=True)
    return frame


def list_datasets() -> list[dict]:
    """Describe every bundled table (name, rows, label, classes, protected, features, licence):
    the datasets :func:`load_dataset` loads.

    The bundled graph dataset ``qm9_carbonyl`` is no table and is not listed here: its
    description, with these keys and two more (``kind``, ``loader``), is
    ``trustlab.explain.equigx.data.qm9_carbonyl_info()``, and ``trustlab data list`` shows both.
    """
    return [load_dataset(name).info() for name in _REGISTRY]
