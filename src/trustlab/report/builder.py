"""The audit report: sections of paragraphs, tables and figures, written as HTML and JSON.

A :class:`Report` holds :class:`Section` objects. Each section carries the blocks a reader sees
(:class:`Paragraph`, :class:`Table`, :class:`Figure`) and a ``data`` dict with its numbers.
``Report.write`` renders one self-contained HTML page (inline CSS, figures as ``data:`` URIs, no
script, no network) and a JSON file holding ``Report.to_dict()``.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from trustlab._results import output_dir, to_jsonable, write_atomic
from trustlab.errors import InputError
from trustlab.report.blocks import BLOCK_TYPES, Figure

__all__ = ["Section", "Report"]

_SECTION_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")


def header_meta(meta: object) -> dict:
    """``meta`` (a mapping, pairs or None) as the dict of a report's header entries.

    The one check of :class:`Report` and of the page builders that add their own entries to
    ``meta`` before the report sees it: anything else is an InputError naming ``meta``.
    """
    try:
        return dict(meta or {})
    except (TypeError, ValueError):  # 'abc': "dictionary update sequence element #0 ..."
        raise InputError.bad("meta", "a dict of header entries or None", meta) from None


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
        if isinstance(self.blocks, (str, bytes, dict)) or not hasattr(self.blocks, "__iter__"):
            raise InputError.bad("blocks", "a list of Paragraph, Table and Figure", self.blocks)
        if not isinstance(self.blocks, list):  # a generator read here would show no block
            self.blocks = list(self.blocks)
        for i, block in enumerate(self.blocks):
            if not isinstance(block, BLOCK_TYPES):
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
        meta = header_meta(meta)
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

    def to_html(self, json_name: str | None = None) -> str:
        """The self-contained HTML page; its footer names ``json_name`` (the file beside it that
        holds its numbers, as :meth:`write` writes) when given."""
        from trustlab.report.render import render_html

        return render_html(self, json_name)

    def write_json(self, out_dir: str | os.PathLike, name: str = "report") -> Path:
        """Write ``<name>.json`` only (used to save progress while an audit runs)."""
        _check_name(name)
        out = _out_dir(out_dir)
        text = json.dumps(self.to_dict(), indent=2, ensure_ascii=False, allow_nan=False)
        return write_atomic(out / f"{name}.json", text)

    def write(self, out_dir: str | os.PathLike, name: str = "report") -> tuple[Path, Path]:
        """Write ``<name>.html`` and ``<name>.json`` (report.html and report.json by default)
        into ``out_dir`` (created if needed).

        Returns
        -------
        (html_path, json_path)
        """
        _check_name(name)
        out = _out_dir(out_dir)
        html_path = write_atomic(out / f"{name}.html", self.to_html(f"{name}.json"))
        return html_path, self.write_json(out, name)

    def __repr__(self) -> str:
        return f"Report({self.title!r}, sections={[s.id for s in self.sections]})"


def _version() -> str:
    from trustlab import __version__

    return __version__


def _check_name(name) -> None:
    """A file name without its suffix, with no folder in it (``out_dir`` says where)."""
    if not isinstance(name, str) or not name.strip() or "/" in name or os.sep in name:
        raise InputError.bad("name", "a file name without suffix or folder, such as 'report'", name)


def _out_dir(out_dir: str | os.PathLike) -> Path:
    return output_dir(out_dir, "out_dir")
