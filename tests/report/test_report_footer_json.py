"""The page's footer names the JSON file written beside it: report.json for the default name,
<name>.json for another (regions.json, ...), nothing for a page written without one."""

from trustlab.report import Report, Section


def _report():
    report = Report("t")
    report.add(Section("s", "S", [], {"x": 1}))
    return report


def test_the_footer_names_the_json_file_written_beside_the_page(tmp_path):
    report = _report()
    html, data = report.write(tmp_path, "regions")
    assert data.name == "regions.json"
    text = html.read_text()
    assert "The numbers are also in regions.json." in text and "report.json" not in text
    html, _ = report.write(tmp_path / "default")
    assert "The numbers are also in report.json." in html.read_text()


def test_a_page_without_a_json_file_names_none():
    assert "The numbers are also in" not in _report().to_html()
