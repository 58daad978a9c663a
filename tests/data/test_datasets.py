import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trustlab.data import list_datasets, load_dataset
from trustlab.errors import InputError


def test_chile_is_the_documented_multiclass_table():
    ds = load_dataset("chile")
    assert ds.frame.shape == (2700 - 168, 8)
    assert set(ds.y) == {"A", "N", "U", "Y"}
    assert set(ds.groups()) == {"C", "M", "N", "S", "SA"}
    assert set(ds.groups("sex")) == {"F", "M"}
    assert ds.frame[ds.label].notna().all()
    assert list(ds.X.columns) == list(ds.features)


def test_logan_has_a_square_predictor_column():
    ds = load_dataset("logan")
    assert ds.frame.shape == (838, 4)
    assert set(ds.frame["focc"]) == set(ds.y)
    assert len(set(ds.y)) == 5


def test_load_returns_independent_copies():
    a = load_dataset("chile")
    a.frame.loc[0, "vote"] = "changed"
    assert load_dataset("chile").frame.loc[0, "vote"] != "changed"


def test_list_datasets_is_json_safe_and_complete():
    infos = list_datasets()
    json.dumps(infos)
    assert {i["name"] for i in infos} == {"chile", "logan"}
    for info in infos:
        assert info["licence"] and info["source"]
        assert len(info["classes"]) >= 3


def test_every_bundled_file_has_a_licence_note():
    from importlib import resources

    folder = resources.files("trustlab.data").joinpath("bundled")
    notes = folder.joinpath("LICENSES.md").read_text()
    for name in ("chile", "logan"):
        assert f"{name}.csv.gz" in notes


def test_the_notes_say_what_each_chile_code_means():
    """carData's Chile documents education as P Primary, PS Post-secondary, S Secondary ("out of
    order"); the notes listed the codes without their meaning, inviting the alphabetical order
    P < PS < S to be read as the levels' order."""
    from importlib import resources

    notes = resources.files("trustlab.data").joinpath("bundled", "LICENSES.md").read_text()
    notes = " ".join(notes.split())
    frame = load_dataset("chile").frame
    assert set(frame["education"].dropna()) == {"P", "PS", "S"}
    assert "education (P primary, PS post-secondary, S secondary" in notes
    assert "the order of the levels, which is P < S < PS" in notes
    assert set(frame["region"]) == {"C", "M", "N", "S", "SA"}
    assert "region (C Central, M Metropolitan Santiago area, N North, S South, SA city" in notes


def test_unknown_dataset_names_the_argument():
    with pytest.raises(InputError, match="name: expected one of 'chile', 'logan'"):
        load_dataset("adult")


def test_the_graph_dataset_name_points_to_its_loader():
    """'trustlab data list' lists qm9_carbonyl as bundled; load_dataset refused it as if unknown."""
    with pytest.raises(InputError, match=r"graph dataset: .*equigx\.data\.qm9_carbonyl\(\)"):
        load_dataset("qm9_carbonyl")


def test_unknown_protected_column_is_rejected():
    with pytest.raises(InputError, match="column"):
        load_dataset("chile").groups("income")


def test_numeric_columns_are_numeric():
    ds = load_dataset("chile")
    for col in ("population", "age", "income", "statusquo"):
        assert np.issubdtype(ds.frame[col].dtype, np.number)


def test_read_table_reads_other_encodings_and_names_the_option(tmp_path):
    from trustlab.data.tables import read_table
    from trustlab.errors import InputError

    path = tmp_path / "latin.csv"
    path.write_bytes("city,n\nMálaga,2\n".encode("latin-1"))
    assert read_table(path, encoding="latin-1")["city"].tolist() == ["Málaga"]
    with pytest.raises(InputError, match=r"--data: could not read .* as utf-8 text .*--encoding"):
        read_table(path)
    with pytest.raises(InputError, match="--encoding: expected a text encoding"):
        read_table(path, encoding="no-such-encoding")


def test_an_undecodable_byte_is_placed_in_the_file_not_in_pandas_buffer(tmp_path):
    """pandas' UnicodeDecodeError counts from its read buffer ('at byte 1' for a byte at 22)."""
    from trustlab.data.tables import read_table

    path = tmp_path / "latin.csv"
    path.write_bytes("city,n\nRome,1\nOslo,3\nMálaga,2\n".encode("latin-1"))
    with pytest.raises(InputError, match=r"at byte 22 \(line 4\)\); name its encoding"):
        read_table(path)


@settings(max_examples=60, deadline=None)
@given(
    text=st.text(alphabet="ab,\n", max_size=300),
    where=st.floats(0.0, 1.0),
    bad=st.sampled_from([b"\xe1", b"\xe1z", b"\xff", b"\xc3("]),
    chunk_size=st.integers(1, 64),
)
def test_the_undecodable_byte_is_where_a_whole_file_decode_finds_it(
    tmp_path_factory, text, where, bad, chunk_size
):
    from trustlab.data.tables import _undecodable

    raw = text.encode()
    cut = int(where * len(raw))
    data = raw[:cut] + bad + raw[cut:]
    path = tmp_path_factory.mktemp("enc") / "t.csv"
    path.write_bytes(data)
    with pytest.raises(UnicodeDecodeError) as info:  # the oracle: decode the file at once
        data.decode("utf-8")
    at = info.value.start
    line = data[:at].count(b"\n") + 1
    expected = f" at byte {at} (line {line})"
    assert _undecodable(path, "utf-8", chunk_size=chunk_size) == expected


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("a,b\n1,nan\n0.5,2\n", "got 'nan' (a missing value) at line 2, column 2"),
        ("1,0.5\nNA,2\n", "got 'NA' (a missing value) at line 2, column 1"),
        (",a,b\n0,1,\n1,0.5,2\n", "got an empty cell (a missing value) at line 2, column 3"),
        ("a,b\n1,x\n", "got 'x' at line 2, column 2"),
        ("1,nan\n0.5,2\n", "got 'nan' (a missing value) at line 1, column 2"),  # not a header
        # float() reads these as 1000 and 12; a CSV writer writes neither (pandas: text)
        ("a,b\n1_000,2\n", "got '1_000' at line 2, column 1"),
        ("1,2\n3,\u0661\u0662\n", "got '\u0661\u0662' at line 2, column 2"),
        ("1_000,2\n3,4\n", "got '1_000' at line 1, column 1"),  # not a header either
    ],
)
def test_read_numeric_table_says_what_a_bad_csv_cell_is(tmp_path, text, says):
    """A literal nan or NA was called 'an empty cell'; a missing value is named as one, with its
    place."""
    from trustlab.data.tables import read_numeric_table

    path = tmp_path / "d.csv"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        read_numeric_table(path, "--deltas")
    assert str(err.value).startswith("--deltas: expected numbers only in d.csv, ")
    assert says in str(err.value)


def test_read_numeric_table_refuses_a_missing_value_in_parquet_as_in_csv(tmp_path):
    """A null in a Parquet file was read as NaN and passed on; it is refused as in a CSV, while
    infinity is a number in both."""
    import pandas as pd

    from trustlab.data.tables import read_numeric_table

    pytest.importorskip("pyarrow")
    pd.DataFrame({"a": [1.0, 2.0], "b": [None, 3.0]}).to_parquet(tmp_path / "d.parquet")
    with pytest.raises(
        InputError, match=r"got a missing value \(null or NaN\) at row 1, column 'b'"
    ):
        read_numeric_table(tmp_path / "d.parquet", "--deltas")
    pd.DataFrame({"a": [1.0, np.inf]}).to_parquet(tmp_path / "inf.parquet")
    (tmp_path / "inf.csv").write_text("a\n1\ninf\n")
    for name in ("inf.parquet", "inf.csv"):
        assert read_numeric_table(tmp_path / name, "--deltas").tolist() == [[1.0], [np.inf]]


def test_read_table_keeps_names_that_look_like_numbers_as_written(tmp_path):
    """Groups "1" and "1.0" (or "01" and "1") were read as one number, so two groups merged (the
    audit counted them as one)."""
    from trustlab.data.tables import read_table

    path = tmp_path / "t.csv"
    path.write_text("g,h,y,x\n1,01,0,1\n1.0,1,1,1.0\n01,NA,1,2\n,02,0,3\n")
    frame = read_table(path, exact_columns=("g", "h", "y"))
    assert frame["g"].tolist()[:3] == ["1", "1.0", "01"] and frame["g"].isna().tolist()[3]
    # a cell pandas reads as missing stays missing in a column of numbers
    assert frame["h"].tolist()[:2] == ["01", "1"] and frame["h"].isna().tolist() == [
        False, False, True, False
    ]  # fmt: skip
    # numbers that merge nothing stay numbers, and so does a column not named exact
    assert frame["y"].tolist() == [0, 1, 1, 0] and frame["x"].tolist() == [1.0, 1.0, 2.0, 3.0]
    assert read_table(path)["g"].tolist()[:3] == [1.0, 1.0, 1.0]
    path.write_text("y,p\n01,1\n02,2\n")  # codes beside predictions written as numbers
    assert read_table(path, exact_columns=("y", "p")).to_dict("list") == {"y": [1, 2], "p": [1, 2]}


def test_read_table_reads_gzipped_tsv_and_says_a_parser_error_in_one_line(tmp_path):
    """A .tsv.gz was refused ('expected a .csv, .tsv or .parquet file') while a .csv.gz was read,
    and a ragged CSV's error ended in a line break (a blank line after the one-line error)."""
    import gzip

    from trustlab.data.tables import read_table

    path = tmp_path / "t.tsv.gz"
    path.write_bytes(gzip.compress(b"a\tb\n1\t2\n"))
    assert read_table(path).to_dict("list") == {"a": [1], "b": [2]}
    named = tmp_path / "t.tsvdata.csv"  # a CSV whose name holds '.tsv' is comma-separated
    named.write_text("a,b\n1,2\n")
    assert list(read_table(named).columns) == ["a", "b"]
    ragged = tmp_path / "r.csv"
    ragged.write_text("a,b\n1,2\n3\n4,5,6\n")
    with pytest.raises(InputError) as exc:
        read_table(ragged)
    assert "\n" not in str(exc.value) and str(exc.value).endswith("saw 3")
