"""``read_table`` refuses a CSV/TSV header that names a column twice: pandas reads the second
``a`` as ``a.1``, so ``--weights a=-1`` (or ``--label a``) silently used the first column only.
Names that differ (by a space, or two empty names pandas calls 'Unnamed: k') are kept."""

import gzip

import pytest

from cli_helpers import one_line, run_main
from trustlab.data.tables import read_table
from trustlab.errors import InputError


@pytest.mark.parametrize(
    "file, text",
    [("t.csv", "a,b,a\n1,2,3\n"), ("t.tsv", "a\tb\ta\n1\t2\t3\n"), ("t.csv", '"a","b","a"\n1,2,3\n'),
     ("t.csv.gz", "a,b,a\n1,2,3\n")],
)  # fmt: skip
def test_a_name_given_twice_is_refused(tmp_path, file, text):
    path = tmp_path / file
    path.write_bytes(gzip.compress(text.encode()) if file.endswith(".gz") else text.encode())
    with pytest.raises(InputError, match=r"--data: expected distinct column names in .*, got 'a' "
                       r"more than once"):  # fmt: skip
        read_table(path)


def test_distinct_names_and_a_headerless_read_are_kept(tmp_path):
    (tmp_path / "spaced.csv").write_text('a,b,"a "\n1,2,3\n')
    assert read_table(tmp_path / "spaced.csv").columns.tolist() == ["a", "b", "a "]
    (tmp_path / "empty.csv").write_text("x,,\n1,2,3\n")
    assert read_table(tmp_path / "empty.csv").columns.tolist() == ["x", "Unnamed: 1", "Unnamed: 2"]
    (tmp_path / "rows.csv").write_text("a,b,a\n1,2,3\n")
    assert read_table(tmp_path / "rows.csv", header=None).shape == (2, 3)


def test_the_command_line_says_it_in_one_line(tmp_path, capsys):
    (tmp_path / "dup.csv").write_text("a,b,a\n1,2,3\n")
    args = ["strategic", "price", "--data", tmp_path / "dup.csv", "--budget-col", "b",
            "--weights", "a=-1"]  # fmt: skip
    code, out, err = run_main(args, capsys)
    assert (code, out) == (2, "")
    assert one_line(err) == (
        f"trustlab: error: --data: expected distinct column names in {tmp_path / 'dup.csv'}, "
        "got 'a' more than once"
    )
