"""Render a :class:`~trustlab.report.builder.Report` as one self-contained HTML page."""

from __future__ import annotations

import datetime
import math
import numbers
from functools import lru_cache
from typing import Any

__all__ = ["render_html", "format_cell", "is_number"]

TEMPLATE_NAME = "report.html.j2"


def is_number(value: Any) -> bool:
    """True for ints and floats (numpy included), False for booleans and everything else."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def format_cell(value: Any) -> str:
    """How a table cell reads: 4 decimals for floats (3 significant digits below 5e-4),
    separators for large numbers (floats from 1e15 on in powers of ten: 1e+30)."""
    if value is None or _missing(value):  # pandas' NA and NaT too, as report.json's null
        return "n/a"
    if isinstance(value, bool) or getattr(getattr(value, "dtype", None), "kind", "") == "b":
        return "yes" if value else "no"  # numpy's bool_ too (not a bool, not a number)
    if isinstance(value, datetime.timedelta) or type(value).__name__ == "timedelta64":
        return _duration(value)  # numpy's is an Integral: int() of one in seconds raised
    if isinstance(value, numbers.Integral):
        return f"{int(value):,}"
    if isinstance(value, numbers.Real):
        x = float(value) + 0.0  # -0.0 reads 0.0000
        if math.isnan(x):
            return "n/a"
        if math.isinf(x):
            return "∞" if x > 0 else "−∞"
        if abs(x) >= 1e15:  # a float's 16th digit on is noise: 1e30 is not 1,000,...,019,884,...
            return f"{x:.4g}"
        if abs(x) >= 1000:
            return f"{x:,.0f}"
        # Small but non-zero values keep three significant digits instead of reading as 0.0000.
        return f"{x:.3g}" if 0 < abs(x) < 5e-4 else f"{x:.4f}"
    return str(value)


def _duration(value: Any) -> str:
    """A duration as Python's timedelta reads ('0:00:05', '1 day, 2:00:00', '-0:00:05'), as a
    timedelta64[s] array row (read through ``tolist``) already did; a numpy one that no timedelta
    holds (finer than a microsecond, years, beyond 999,999,999 days) in numpy's words ('1500
    nanoseconds', '2 years')."""
    if not isinstance(value, datetime.timedelta):
        unit = value.dtype.str[-3:-1]  # '<m8[ns]' -> 'ns'
        item = value.item()
        if not isinstance(item, datetime.timedelta) and unit in ("ns", "ps", "fs", "as"):
            micro = value.astype("timedelta64[us]")
            if micro.astype(value.dtype) == value:  # whole microseconds (no wrap-around)
                item = micro.item()
        if not isinstance(item, datetime.timedelta):
            return str(value)
        value = item
    if value < datetime.timedelta(0):
        try:
            return f"-{-value}"
        except OverflowError:  # -timedelta.min is no timedelta
            pass
    return str(value)


def _missing(value: Any) -> bool:
    """pandas' NA and NaT, numpy's NaT: missing values that are not None or NaN."""
    if type(value).__name__ in ("NAType", "NaTType"):
        return True
    kind = getattr(getattr(value, "dtype", None), "kind", "")
    return kind in ("m", "M") and getattr(value, "ndim", 1) == 0 and str(value) == "NaT"


# Header keys whose whole numbers are names, not amounts: no thousands separator ('12,345').
_IDENTIFIER_KEYS = frozenset({"random_state", "seed"})


def _meta_value(value: Any, key: str = "") -> str:
    """A header value: a list or dict on one line, its numbers read as in the tables (a missing
    value, NaN included, as n/a: it read 'None', and 'train: 1266' beside a table's 1,266); a
    seed as written (``random_state`` 12345 read '12,345')."""
    if (
        key in _IDENTIFIER_KEYS
        and isinstance(value, numbers.Integral)
        and not isinstance(value, bool)
    ):
        return str(int(value))
    if isinstance(value, (list, tuple)):  # notes are sentences, with commas of their own
        return (" " if key in ("notes", "warnings") else ", ").join(map(_meta_item, value))
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_meta_item(v)}" for k, v in value.items())
    return _meta_item(value)


def _meta_item(value: Any) -> str:
    return format_cell(value) if value is None or is_number(value) else str(value)


def _meta_label(key: str) -> str:
    return key.replace("_", " ").capitalize()


@lru_cache(maxsize=1)
def _environment():
    import jinja2

    from trustlab.report.blocks import Figure, Paragraph, Table

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("trustlab.report", "templates"),
        # Every value from the data (column names, labels, error messages) is escaped.
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["cell"] = format_cell
    env.filters["meta_value"] = _meta_value
    env.filters["meta_label"] = _meta_label
    env.tests["number"] = is_number
    env.tests["paragraph"] = lambda block: isinstance(block, Paragraph)
    env.tests["table"] = lambda block: isinstance(block, Table)
    env.tests["figure"] = lambda block: isinstance(block, Figure)
    return env


def render_html(report, json_name: str | None = None) -> str:
    """The report as an HTML string (inline CSS, figures as data: URIs, no scripts); the footer
    names ``json_name``, the file beside the page holding its numbers, when there is one."""
    template = _environment().get_template(TEMPLATE_NAME)
    return template.render(
        report=report, meta=report.meta, sections=report.sections, json_name=json_name
    )
