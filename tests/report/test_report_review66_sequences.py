"""Report blocks keep what they are given to show (review 66).

``Section.blocks`` and ``Table.columns`` / ``Table.rows`` were checked by iterating them in
``__post_init__`` and kept as given. Measured on the old files:

* ``Section("s", "S", (b for b in [Paragraph("hello")]), {})``: the check read the generator, so
  report.html showed the section with no paragraph, silently;
* ``Table(["a", "b"], (r for r in [[1, 2], [3, 4]]))``: the page failed at ``Report.write`` with
  jinja2's ``UndefinedError: generator object has no element 0``;
* ``Table(["a", "b"], np.array([[1, 2], [3, 4]]))``: ``Report.write`` failed with numpy's
  ``ValueError: The truth value of an array with more than one element is ambiguous``;
* ``Table("ab", [[1, 2]])`` drew the columns 'a' and 'b'; a row given as the dict
  ``{"a": 1, "b": 2}`` drew its keys 'a', 'b' as the cells.

Now generators and arrays are kept as lists (the page shows every block and cell), and text,
a mapping or a set where a sequence belongs is an ``InputError`` naming the argument. Lists and
tuples stay the objects given.
"""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.report import Paragraph, Report, Section, Table


def _page(section: Section, tmp_path) -> str:
    report = Report("t")
    report.add(section)
    html_path, _ = report.write(tmp_path)
    return html_path.read_text(encoding="utf-8")


def test_a_generator_of_blocks_is_shown(tmp_path):
    section = Section("s", "S", (b for b in [Paragraph("hello there")]), {})
    assert len(section.blocks) == 1
    assert "hello there" in _page(section, tmp_path)


@pytest.mark.parametrize(
    "rows",
    [
        pytest.param((r for r in [[1, 2], [3, 4]]), id="generator"),
        pytest.param(np.array([[1, 2], [3, 4]]), id="array"),
        pytest.param([np.array([1, 2]), (x for x in [3, 4])], id="array-and-generator-rows"),
    ],
)
def test_rows_given_as_a_generator_or_an_array_are_drawn(rows, tmp_path):
    table = Table(["a", "b"], rows)
    assert [list(r) for r in table.rows] == [[1, 2], [3, 4]]
    page = _page(Section("s", "S", [table], {}), tmp_path)
    cells = [f'<td class="num">{v}</td>' for v in (1, 2, 3, 4)]
    assert all(cell in page for cell in cells)


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        pytest.param({"columns": "ab", "rows": [[1, 2]]}, "columns", id="columns-text"),
        pytest.param({"columns": ["a", "b"], "rows": [{"a": 1, "b": 2}]}, "rows[0]", id="dict"),
        pytest.param({"columns": ["a", "b"], "rows": ["xy"]}, "rows[0]", id="text-row"),
        pytest.param({"columns": ["a"], "rows": 5}, "rows", id="rows-number"),
    ],
)
def test_text_or_a_mapping_where_a_sequence_belongs_is_refused(kwargs, argument):
    with pytest.raises(InputError) as info:
        Table(**kwargs)
    assert info.value.argument == argument


def test_blocks_given_as_one_paragraph_are_refused():
    with pytest.raises(InputError) as info:
        Section("s", "S", "hello", {})
    assert info.value.argument == "blocks"


def test_lists_and_tuples_stay_the_objects_given():
    rows, columns = [[1, 2], (3, 4)], ("a", "b")
    table = Table(columns, rows)
    assert table.rows is rows and table.columns is columns
    blocks = [Paragraph("x")]
    assert Section("s", "S", blocks, {}).blocks is blocks
