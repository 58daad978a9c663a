"""The blocks a report section shows: :class:`Paragraph`, :class:`Table` and :class:`Figure`."""

from __future__ import annotations

import base64
import io
import sys
from dataclasses import InitVar, dataclass, field
from typing import Any

import numpy as np

from trustlab._results import FIGURE_DPI, save_png
from trustlab.errors import InputError

__all__ = ["Paragraph", "Table", "Figure", "BLOCK_TYPES"]

_PARAGRAPH_KINDS = ("text", "note", "warning")
_CSS_PIXEL_SCALE = 96 / FIGURE_DPI  # show figures at their physical size, sharp on HiDPI screens


@dataclass(frozen=True)
class Paragraph:
    """A paragraph of plain text (HTML in it is shown as text, never interpreted).

    ``kind`` is ``"text"``, ``"note"`` (a highlighted remark) or ``"warning"``.
    """

    text: str
    kind: str = "text"

    def __post_init__(self):
        if not isinstance(self.text, str):
            raise InputError.bad("text", "a string", self.text)
        if self.kind not in _PARAGRAPH_KINDS:
            raise InputError.bad(
                "kind", "one of " + ", ".join(map(repr, _PARAGRAPH_KINDS)), self.kind
            )


@dataclass(frozen=True)
class Table:
    """A table of cells; numbers are formatted for reading, text is escaped.

    Floats show 4 decimals (thousands separators from 1000 on); NaN or None show as "n/a".
    """

    columns: list[str]
    rows: list[list]
    caption: str = ""

    def __post_init__(self):
        # Kept as lists: a generator read here would be empty when the page is drawn, an array
        # of rows failed there ('truth value of an array ... is ambiguous').
        columns = _cells(self.columns, "columns", "a sequence of column names")
        object.__setattr__(self, "columns", columns)
        rows = _cells(self.rows, "rows", "a sequence of rows, each a list of cells")
        cells = [
            _cells(row, f"rows[{i}]", "a list of cells, one per column")
            for i, row in enumerate(rows)
        ]
        if any(new is not old for new, old in zip(cells, rows, strict=True)):
            rows = cells  # lists and tuples stay the objects given
        object.__setattr__(self, "rows", rows)
        width = len(self.columns)
        if width == 0:
            raise InputError.bad("columns", "at least one column name", self.columns)
        for i, row in enumerate(self.rows):
            if len(row) != width:
                raise InputError(
                    f"rows: expected {width} cells per row (one per column), got {len(row)} in "
                    f"row {i}",
                    argument="rows",
                )


@dataclass(frozen=True)
class Figure:
    """A matplotlib figure, encoded once as a base64 PNG and then closed.

    Every text is drawn as written: a '$' is a dollar sign, never matplotlib mathtext (names from
    the data, such as a group '$10k-$50k', end up in labels and legends).

    Parameters
    ----------
    figure : matplotlib.figure.Figure
        The figure to embed. It is closed after encoding, so build a new one for each Figure.
    caption : str
        Shown under the picture.
    alt : str, optional
        Text alternative for screen readers; defaults to the caption.
    """

    figure: InitVar[Any]
    caption: str
    alt: str = ""
    png_base64: str = field(init=False, repr=False)
    width: int = field(init=False)
    height: int = field(init=False)

    def __post_init__(self, figure):
        if not hasattr(figure, "savefig"):
            raise InputError.bad("figure", "a matplotlib Figure", figure)
        buffer = io.BytesIO()
        save_png(figure, buffer)
        _close_figure(figure)
        png = buffer.getvalue()
        width, height = _png_size(png)
        object.__setattr__(self, "png_base64", base64.b64encode(png).decode("ascii"))
        object.__setattr__(self, "width", round(width * _CSS_PIXEL_SCALE))
        object.__setattr__(self, "height", round(height * _CSS_PIXEL_SCALE))
        if not self.alt:
            object.__setattr__(self, "alt", self.caption)

    @property
    def data_uri(self) -> str:
        return "data:image/png;base64," + self.png_base64


def _cells(value: Any, name: str, expected: str) -> list | tuple:
    """``value`` as a list (a list or tuple as given, not copied); text, a mapping or a set (no
    order, or its keys for cells) and a 0-d array are refused. An array is read through its
    ``tolist`` (a masked cell None), except that a datetime64 or timedelta64 array keeps numpy's
    cells (its ``tolist`` turns a [ns] one into a count of nanoseconds; format_cell reads numpy's
    durations as a list of them reads)."""
    if (
        isinstance(value, (str, bytes, dict, set, frozenset))
        or not hasattr(value, "__iter__")
        or getattr(value, "ndim", None) == 0
    ):
        raise InputError.bad(name, expected, value)
    if isinstance(value, (list, tuple)):
        return value
    if (
        isinstance(value, np.ndarray)
        and value.dtype.kind in "mM"
        and not isinstance(value, np.ma.MaskedArray)
    ):
        return list(value)
    return list(value.tolist() if hasattr(value, "tolist") else value)


def _close_figure(figure) -> None:
    # Figures made with pyplot stay registered there until closed; plain Figure objects do not.
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close(figure)


def _png_size(png: bytes) -> tuple[int, int]:
    # The IHDR chunk of every PNG starts at byte 16: width then height, big-endian.
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


BLOCK_TYPES = (Paragraph, Table, Figure)
