"""Review 54: an empty answers file (or one holding only comments) was refused as "expected a
YAML mapping (key: value lines), got None", which named nothing the assessor wrote; it now says
the file is empty."""

from __future__ import annotations

import pytest

from cli_helpers import one_line, run_main
from trustlab.errors import InputError
from trustlab.governance import load_answers


@pytest.mark.parametrize(
    ("text", "said"),
    [("", "an empty file"), ("  \n\n", "an empty file"), ("# to do\n\n", "comments only")],
)
def test_an_empty_answers_file_is_called_empty(tmp_path, capsys, text, said):
    path = tmp_path / "answers.yaml"
    path.write_text(text, encoding="utf-8")
    expected = f"(answers.yaml): expected a YAML mapping (key: value lines), got {said}"
    with pytest.raises(InputError, match=r"^answers \(answers\.yaml\)") as err:
        load_answers(path)
    assert str(err.value).endswith(expected) and "None" not in str(err.value)
    for args in (["governance", "validate", path],
                 ["governance", "assess", path, "--out", tmp_path / "out"]):  # fmt: skip
        code, _, stderr = run_main(args, capsys)
        assert code == 2
        line = one_line(stderr)
        assert line.endswith(expected) and "None" not in line
    assert not (tmp_path / "out").exists()


def test_a_null_document_is_still_said_as_read(tmp_path):
    path = tmp_path / "answers.yaml"
    path.write_text("null\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"mapping \(key: value lines\), got None$"):
        load_answers(path)
