"""The report as files: JSON round trip, self-contained HTML, escaping, validation of blocks."""

import base64
import json
import math
from html.parser import HTMLParser

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.figure import Figure as MplFigure

from trustlab._results import to_jsonable
from trustlab.errors import InputError
from trustlab.report import Figure, Paragraph, Report, Section, Table
from trustlab.report.render import format_cell

INJECTION = '<script>alert("x")</script><img src=x onerror=alert(1)>'


class _Page(HTMLParser):
    """Collects what a browser would act on: elements, their attributes and the visible text."""

    def __init__(self):
        super().__init__()
        self.elements = []  # (tag, attrs dict)
        self.text = []

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def parse(html):
    page = _Page()
    page.feed(html)
    return page


def small_figure(kind="bar"):
    fig = MplFigure(figsize=(3, 2))
    ax = fig.add_subplot()
    ax.bar(["a", "b"], [1, 2]) if kind == "bar" else ax.plot([0, 1], [1, 0])
    return fig


def sample_report():
    report = Report("Sample audit", {"dataset": "toy", "models": ["m1", "m2"]})
    report.add(
        Section(
            "first",
            "First section",
            [
                Paragraph("Some text."),
                Table(["group", "n", "share"], [["a", 3, 0.25], ["b", 9, 0.75]], caption="Sizes"),
                Figure(small_figure(), "Bars"),
            ],
            data={"n": {"a": 3, "b": 9}, "share": np.array([0.25, 0.75])},
            summary="Two groups.",
        )
    )
    report.add(
        Section(
            "second", "Second", [Figure(small_figure("line"), "Line", alt="A falling line")], {}
        )
    )
    report.add(Section.failed("third", "Third", ValueError("went wrong")))
    return report


def test_json_file_equals_to_dict(tmp_path):
    report = sample_report()
    _, json_path = report.write(tmp_path)
    assert json.loads(json_path.read_text()) == report.to_dict()


def test_write_returns_html_and_json_paths_in_a_new_directory(tmp_path):
    html_path, json_path = sample_report().write(tmp_path / "new" / "dir")
    assert html_path == tmp_path / "new" / "dir" / "report.html"
    assert json_path == tmp_path / "new" / "dir" / "report.json"
    assert html_path.is_file() and json_path.is_file()


def test_html_has_an_element_for_each_section_id():
    report = sample_report()
    page = parse(report.to_html())
    ids = {attrs.get("id") for _, attrs in page.elements}
    links = {attrs.get("href") for tag, attrs in page.elements if tag == "a"}
    for section in report.sections:
        assert section.id in ids
        assert f"#{section.id}" in links  # the table of contents points at it


def test_one_embedded_png_per_figure():
    report = sample_report()
    page = parse(report.to_html())
    images = [attrs for tag, attrs in page.elements if tag == "img"]
    figures = [f for s in report.sections for f in s.figures]
    assert len(images) == len(figures) == 2
    for attrs, figure in zip(images, figures, strict=True):
        prefix = "data:image/png;base64,"
        assert attrs["src"].startswith(prefix)
        png = base64.b64decode(attrs["src"][len(prefix) :], validate=True)
        assert png.startswith(b"\x89PNG\r\n\x1a\n")
        assert attrs["alt"] == figure.alt


def test_html_references_no_outside_resource():
    html = sample_report().to_html()
    page = parse(html)
    for tag, attrs in page.elements:
        assert tag not in ("script", "iframe", "object", "embed")
        for name in ("src", "href", "action", "srcset"):
            value = attrs.get(name)
            if value is not None:
                assert value.startswith(("data:", "#")), (tag, name, value[:60])
    assert "url(" not in html and "@import" not in html


def test_user_text_is_escaped_not_interpreted():
    report = Report(INJECTION, {"dataset": INJECTION})
    report.add(
        Section(
            "evil",
            INJECTION,
            [
                Paragraph(INJECTION),
                Table([INJECTION, "n"], [[INJECTION, 1]], caption=INJECTION),
                Figure(small_figure(), INJECTION, alt=INJECTION),
            ],
            data={INJECTION: 1},
            summary=INJECTION,
        )
    )
    report.add(Section.failed("broken", "Broken", RuntimeError(INJECTION)))
    page = parse(report.to_html())
    tags = [tag for tag, _ in page.elements]
    assert "script" not in tags
    assert tags.count("img") == 1  # only the figure, not the injected one
    assert not any(name.startswith("on") for _, attrs in page.elements for name in attrs)
    # The text still reads as the user wrote it (title, header, heading, paragraph, caption ...).
    assert "".join(page.text).count(INJECTION) >= 8


def test_failed_section_shows_its_error_and_a_badge():
    report = sample_report()
    html = report.to_html()
    assert "ValueError: went wrong" in html
    assert 'class="badge">failed' in html
    third = report.to_dict()["sections"][2]
    assert third["status"] == "failed" and third["error"] == "ValueError: went wrong"


def test_incomplete_report_says_so():
    report = sample_report()
    report.complete = False
    assert "This report is incomplete" in report.to_html()
    assert report.to_dict()["complete"] is False


def test_meta_gets_version_and_creation_time():
    from trustlab import __version__

    meta = Report("x").meta
    assert meta["trustlab_version"] == __version__
    assert meta["created"].endswith("+00:00")


def test_data_is_made_json_safe():
    section = Section(
        "s",
        "S",
        [],
        {"a": np.float32(0.5), "b": np.arange(3), "c": float("nan"), "d": [np.inf, 1], 4: True},
    )
    assert section.data == {"a": 0.5, "b": [0, 1, 2], "c": None, "d": [None, 1], "4": True}
    assert isinstance(section.data["b"][0], int)


def test_pandas_missing_values_become_null():
    import pandas as pd

    assert to_jsonable({"a": pd.NA, "b": pd.NaT, "c": pd.Timestamp("2024-01-02")}) == {
        "a": None,
        "b": None,
        "c": "2024-01-02T00:00:00",
    }


def test_non_json_data_is_rejected_naming_the_key():
    with pytest.raises(InputError, match=r"data\['bad'\]"):
        Section("s", "S", [], {"bad": object()})


def test_duplicate_section_id_is_rejected():
    report = Report("x")
    report.add(Section("s", "S", [], {}))
    with pytest.raises(InputError, match="section id not used yet"):
        report.add(Section("s", "Again", [], {}))


@pytest.mark.parametrize("bad_id", ["", "1abc", "has space", 'q"x', None])
def test_section_id_must_be_an_html_safe_name(bad_id):
    with pytest.raises(InputError, match="id"):
        Section(bad_id, "S", [], {})


def test_blocks_must_be_paragraph_table_or_figure():
    with pytest.raises(InputError, match=r"blocks\[1\]"):
        Section("s", "S", [Paragraph("ok"), "not a block"], {})


def test_table_rows_must_match_the_columns():
    with pytest.raises(InputError, match="expected 2 cells per row"):
        Table(["a", "b"], [[1, 2], [3]])


def test_a_table_without_rows_says_so_in_one_cell_across_its_columns():
    report = Report("Empty table")
    report.add(Section("empty", "Empty", [Table(["group", "n", "share"], [], caption="None")], {}))
    page = parse(report.to_html())
    cells = [attrs for tag, attrs in page.elements if tag == "td"]
    assert cells == [{"class": "empty", "colspan": "3"}]
    assert "(no rows)" in "".join(page.text)
    # a table with rows gets no such cell
    assert "(no rows)" not in "".join(parse(sample_report().to_html()).text)


def test_figure_closes_a_pyplot_figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([1, 2])
    Figure(fig, "closed after encoding")
    assert not plt.fignum_exists(fig.number)


def test_figure_size_is_the_png_size_at_screen_resolution():
    fig = MplFigure(figsize=(3, 2))
    fig.add_subplot().plot([0, 1])
    figure = Figure(fig, "c")
    png = base64.b64decode(figure.png_base64)
    width = int.from_bytes(png[16:20], "big")
    assert figure.width == round(width * 96 / 144)


@settings(max_examples=60, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e9, max_value=1e9))
def test_formatted_float_reads_back_within_rounding(x):
    text = format_cell(x)
    tolerance = 0.5 if abs(x) >= 999.99995 else 5e-5
    assert abs(float(text.replace(",", "")) - x) <= tolerance + 1e-9 * abs(x)


def test_huge_floats_show_no_made_up_digits_and_numpy_bools_read_as_bools():
    # 1e30 showed as 1,000,000,000,000,000,019,884,624,838,656; np.True_ as "True" beside "yes"
    assert format_cell(1e30) == "1e+30"
    assert format_cell(np.float64(-2.5e18)) == "-2.5e+18"
    assert format_cell(123456789012345.6) == "123,456,789,012,346"
    assert format_cell(10**30) == f"{10**30:,}"  # an int is exact
    assert [format_cell(np.bool_(True)), format_cell(np.bool_(False))] == ["yes", "no"]


def test_format_cell_special_values():
    assert [format_cell(v) for v in (None, float("nan"), math.inf, True, 12345)] == [
        "n/a",
        "n/a",
        "∞",
        "yes",
        "12,345",
    ]


_json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.integers(-100, 100).map(np.int64),
    st.floats(-1e6, 1e6).map(np.float64),
)


@settings(max_examples=60, deadline=None)
@given(
    st.recursive(
        _json_leaf,
        lambda kids: (
            st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=4), kids, max_size=3)
        ),
        max_leaves=12,
    )
)
def test_to_jsonable_output_survives_strict_json(value):
    safe = to_jsonable(value)
    assert json.loads(json.dumps(safe, allow_nan=False)) == safe
