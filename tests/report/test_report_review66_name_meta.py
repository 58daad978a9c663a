"""Report refuses a file name with a folder in it and a header that is no mapping (review 66).

Measured on the old builder.py: ``Report("t").write(d, name="a/b")`` ended in a raw
``FileNotFoundError: [Errno 2] No such file or directory: '.../a/.b.html.j3z237eu.html'`` (the
atomic write's temporary name), ``name=""`` wrote the hidden files ``.html`` and ``.json``, and
``Report("t", meta="abc")`` raised ``ValueError: dictionary update sequence element #0 has length
1; 2 is required``. Now each is an ``InputError`` naming ``name`` or ``meta``, before anything is
written; a dict (or pairs, as ``dict`` takes them) and plain names such as ``report`` or ``audit
2024`` work as before.
"""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.report import Report


@pytest.mark.parametrize("name", ["a/b", "", "  ", 5])
@pytest.mark.parametrize("method", ["write", "write_json"])
def test_a_name_that_is_no_plain_file_name_is_refused(tmp_path, name, method):
    with pytest.raises(InputError) as info:
        getattr(Report("t"), method)(tmp_path, name=name)
    assert info.value.argument == "name"
    assert list(tmp_path.iterdir()) == []


def test_plain_names_are_written(tmp_path):
    html_path, json_path = Report("t").write(tmp_path, name="audit 2024")
    assert (html_path.name, json_path.name) == ("audit 2024.html", "audit 2024.json")


@pytest.mark.parametrize("meta", ["abc", 5, [1, 2]])
def test_a_header_that_is_no_mapping_is_refused(meta):
    with pytest.raises(InputError) as info:
        Report("t", meta)
    assert info.value.argument == "meta"


def test_a_dict_or_pairs_make_the_header():
    assert Report("t", {"dataset": "toy"}).meta["dataset"] == "toy"
    assert Report("t", [("dataset", "toy")]).meta["dataset"] == "toy"
