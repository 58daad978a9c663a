"""The audit report: sections of paragraphs, tables and figures, written as HTML and JSON.

A :class:`Report` holds :class:`Section` objects. Each section carries the blocks a reader sees
(:class:`Paragraph`, :class:`Table`, :class:`Figure`) and a ``data`` dict with its numbers.
``Report.write`` renders one self-contained HTML page (inline CSS, figures as ``data:`` URIs, no
script, no network) and a JSON file holding ``Report.to_dict()``.
"""

from __future__ import annotations

import base64
import io
import json
import math
import os
import re
import sys
import tempfile
from dataclasses import InitVar, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from trustlab.errors import InputError

__all__ = ["Paragraph", "Table", "Figure", "Section", "Report", "to_jsonable"]

HTML_NAME = "report.html"
JSON_NAME = "report.json"
_SECTION_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
_PARAGRAPH_KINDS = ("text", "note", "warning")
_FIGURE_DPI = 144
_CSS_PIXEL_SCALE = 96 / _FIGURE_DPI  # show figures at their physical size, sharp on HiDPI screens


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
        figure.savefig(buffer, format="png", dpi=_FIGURE_DPI, bbox_inches="tight")
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


def _close_figure(figure) -> None:
    # Figures made with pyplot stay registered there until closed; plain Figure objects do not.
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close(figure)


def _png_size(png: bytes) -> tuple[int, int]:
    # The IHDR chunk of every PNG starts at byte 16: width then height, big-endian.
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


_BLOCK_TYPES = (Paragraph, Table, Figure)


@dataclass
class Section:
    """One card of the report.

    Parameters
    ----------
    id : str
        Short identifier: the HTML anchor and the key in report.json (letters, digits, ``-``,
        ``_``; starting with a letter).
    title : str
        The heading a reader sees.
    blocks : list
        :class:`Paragraph`, :class:`Table` and :class:`Figure` objects, shown in order.
    data : dict
        The section's numbers for report.json. Converted to JSON-safe values on creation
        (numpy scalars and arrays to numbers and lists, NaN and infinity to ``None``).
    summary : str, optional
        One or two sentences shown under the title and stored in the JSON.
    error : str, optional
        Set on a section that failed; see :meth:`failed`.
    """

    id: str
    title: str
    blocks: list
    data: dict
    summary: str = ""
    error: str | None = None

    def __post_init__(self):
        if not isinstance(self.id, str) or not _SECTION_ID.match(self.id):
            raise InputError.bad(
                "id", "letters, digits, '-' or '_', starting with a letter", self.id
            )
        for i, block in enumerate(self.blocks):
            if not isinstance(block, _BLOCK_TYPES):
                raise InputError.bad(f"blocks[{i}]", "a Paragraph, Table or Figure", block)
        if not isinstance(self.data, dict):
            raise InputError.bad("data", "a dict", self.data)
        self.data = to_jsonable(self.data, "data")

    @classmethod
    def failed(cls, id: str, title: str, error: BaseException | str) -> Section:
        """A section that could not be built: the report shows the error instead of the content."""
        if isinstance(error, BaseException):
            error = f"{type(error).__name__}: {error}"
        return cls(id=id, title=title, blocks=[], data={}, error=str(error))

    @property
    def status(self) -> str:
        """``"ok"`` or ``"failed"``."""
        return "failed" if self.error is not None else "ok"

    @property
    def figures(self) -> list[Figure]:
        return [b for b in self.blocks if isinstance(b, Figure)]

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "title": self.title,
            "status": self.status,
            "summary": self.summary,
            "error": self.error,
            "data": self.data,
            "figures": [{"caption": f.caption, "alt": f.alt} for f in self.figures],
        }


class Report:
    """An audit report: a title, metadata and sections, written as HTML and JSON.

    Parameters
    ----------
    title : str
    meta : dict, optional
        Shown in the page header (dataset, models, ...). ``trustlab_version`` and ``created``
        (UTC, ISO 8601) are added when absent.

    Examples
    --------
    >>> import tempfile
    >>> from matplotlib.figure import Figure as MplFigure
    >>> from trustlab.report import Figure, Paragraph, Report, Section, Table
    >>> fig = MplFigure(figsize=(3, 2)); _ = fig.add_subplot().bar(["a", "b"], [1, 2])
    >>> report = Report("Example", {"dataset": "toy"})
    >>> _ = report.add(Section("counts", "Counts", [
    ...     Paragraph("Two groups."),
    ...     Table(["group", "n"], [["a", 1], ["b", 2]]),
    ...     Figure(fig, "Rows per group"),
    ... ], data={"n": {"a": 1, "b": 2}}))
    >>> html_path, json_path = report.write(tempfile.mkdtemp())
    >>> html_path.name, json_path.name
    ('report.html', 'report.json')
    """

    def __init__(self, title: str, meta: dict | None = None):
        if not isinstance(title, str) or not title:
            raise InputError.bad("title", "a non-empty string", title)
        meta = dict(meta or {})
        meta.setdefault("trustlab_version", _version())
        meta.setdefault("created", datetime.now(UTC).isoformat(timespec="seconds"))
        self.title = title
        self.meta = to_jsonable(meta, "meta")
        self.sections: list[Section] = []
        # False while an audit is still adding sections; the partial report.json says so.
        self.complete = True

    def add(self, section: Section) -> Section:
        """Append a section (its id must be new) and return it."""
        if not isinstance(section, Section):
            raise InputError.bad("section", "a Section", section)
        if any(s.id == section.id for s in self.sections):
            raise InputError.bad("section", "a section id not used yet", section.id)
        self.sections.append(section)
        return section

    def to_dict(self) -> dict:
        """Everything report.json holds: title, meta, completeness and each section's numbers."""
        return {
            "title": self.title,
            "meta": self.meta,
            "complete": self.complete,
            "sections": [s.to_dict() for s in self.sections],
        }

    def to_html(self) -> str:
        """The self-contained HTML page."""
        from trustlab.report.render import render_html

        return render_html(self)

    def write_json(self, out_dir: str | os.PathLike) -> Path:
        """Write report.json only (used to save progress while an audit runs)."""
        out = _out_dir(out_dir)
        text = json.dumps(self.to_dict(), indent=2, ensure_ascii=False, allow_nan=False)
        return _write_atomic(out / JSON_NAME, text)

    def write(self, out_dir: str | os.PathLike) -> tuple[Path, Path]:
        """Write report.html and report.json into ``out_dir`` (created if needed).

        Returns
        -------
        (html_path, json_path)
        """
        out = _out_dir(out_dir)
        html_path = _write_atomic(out / HTML_NAME, self.to_html())
        return html_path, self.write_json(out)

    def __repr__(self) -> str:
        return f"Report({self.title!r}, sections={[s.id for s in self.sections]})"


def to_jsonable(value: Any, name: str = "value") -> Any:
    """Convert numpy and pandas values to plain JSON values; NaN and infinity become None.

    Objects with a ``to_dict()`` method are converted through it. Anything else that JSON cannot
    hold raises :class:`InputError` naming where it was found.
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if type(value).__name__ in ("NAType", "NaTType"):  # pandas' missing values
        return None
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {_key(k, name): to_jsonable(v, f"{name}[{k!r}]") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v, f"{name}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if hasattr(value, "tolist") and hasattr(value, "dtype"):  # numpy arrays and scalars
        return to_jsonable(value.tolist(), name)
    if hasattr(value, "to_dict") and callable(value.to_dict):
        return to_jsonable(value.to_dict(), name)
    if hasattr(value, "isoformat"):  # dates and times
        return value.isoformat()
    raise InputError.bad(name, "JSON-safe values (numbers, strings, lists, dicts)", value)


def _key(key: Any, name: str) -> str:
    if isinstance(key, str):
        return key
    if hasattr(key, "item"):
        key = key.item()
    if isinstance(key, (int, float, bool)) or key is None:
        return str(key)
    raise InputError.bad(f"{name} keys", "strings or numbers", key)


def _version() -> str:
    from trustlab import __version__

    return __version__


def _out_dir(out_dir: str | os.PathLike) -> Path:
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError.bad("out_dir", "a directory that can be created", str(out)) from exc
    return out


def _write_atomic(path: Path, text: str) -> Path:
    # Write beside the target, then rename: a reader never sees half a file, even after a crash.
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)  # mkstemp makes the file private; a report is meant to be shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
