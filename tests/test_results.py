"""The one Result base, the one JSON converter and the one writer of results."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from trustlab._results import (
    FIGURE_DPI,
    Result,
    check_output_dir,
    internal_field,
    json_text,
    new_axes,
    output_dir,
    to_jsonable,
    write_atomic,
    write_outputs,
)
from trustlab.errors import InputError


@dataclass(frozen=True)
class Sample(Result):
    name: str
    mean: float
    values: np.ndarray = internal_field()
    _dict_extras = ("n",)
    figure_name: ClassVar[str] = "sample.png"

    @property
    def n(self) -> int:
        return int(self.values.size)

    def summary(self) -> str:
        return f"{self.name}: mean {self.mean:.2f} over {self.n}"

    def plot(self, ax=None):
        ax = new_axes(ax)
        ax.plot(self.values)
        return ax

    def files(self):
        return {
            "values.csv": pd.DataFrame({"value": self.values}),
            "values.npy": self.values,
            "note.txt": "plain text\n",
            "extra.json": {"max": self.values.max()},
            "hist.png": lambda ax: ax.hist(self.values),
        }


@dataclass(frozen=True)
class Plain(Result):
    count: int
    share: float
    label: str


def make_sample() -> Sample:
    values = np.array([1.0, 2.0, 4.0])
    return Sample("s", np.float64(values.mean()), values)


def test_to_dict_holds_the_fields_and_extras_but_not_internal_fields():
    data = make_sample().to_dict()
    assert data == {"name": "s", "mean": pytest.approx(7 / 3), "n": 3}
    assert type(data["mean"]) is float and type(data["n"]) is int


def test_to_dict_turns_numpy_and_non_finite_values_into_plain_json():
    data = Plain(np.int64(3), np.float32(np.nan), "x").to_dict()
    assert data == {"count": 3, "share": None, "label": "x"}
    assert type(data["count"]) is int
    json.dumps(data, allow_nan=False)


def test_the_generic_summary_shows_the_scalar_values():
    text = Plain(2, 0.5, "x").summary()
    assert text.splitlines() == ["Plain", "  count: 2", "  share: 0.5", "  label: x"]
    assert str(make_sample()) == "s: mean 2.33 over 3"


def test_nested_results_and_containers_convert_through_to_dict():
    nested = {"inner": Plain(1, 0.25, "a"), "pair": ("a", np.arange(2)), "set": {3}}
    assert to_jsonable(nested) == {
        "inner": {"count": 1, "share": 0.25, "label": "a"},
        "pair": ["a", [0, 1]],
        "set": [3],
    }


def test_to_jsonable_keys_paths_and_pandas_missing_values():
    value = {np.int64(1): Path("a/b"), ("x", 2): pd.NA, 2.5: pd.Timestamp("2025-01-02")}
    assert to_jsonable(value) == {"1": "a/b", "x x 2": None, "2.5": "2025-01-02T00:00:00"}


def test_to_jsonable_names_where_an_unserialisable_value_is():
    with pytest.raises(InputError, match=r"value\['a'\]\[1\]: expected JSON-safe values"):
        to_jsonable({"a": [1, object()]})


json_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    hnp.arrays(np.float64, hnp.array_shapes(max_dims=2, max_side=3)),
    hnp.from_dtype(np.dtype("int32")),
)
json_values = st.recursive(
    json_leaves,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=10,
)


@given(json_values)
def test_every_converted_value_is_strict_json_and_idempotent(value):
    converted = to_jsonable(value)
    text = json.dumps(converted, allow_nan=False)
    assert json.loads(text) == converted
    assert to_jsonable(converted) == converted


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_write_outputs_writes_json_picture_and_every_file_kind(tmp_path):
    result = make_sample()
    written = write_outputs(result, tmp_path / "out")
    names = [p.name for p in written]
    assert names == [
        "result.json",
        "sample.png",
        "values.csv",
        "values.npy",
        "note.txt",
        "extra.json",
        "hist.png",
    ]
    out = tmp_path / "out"
    assert json.loads((out / "result.json").read_text()) == result.to_dict()
    assert pd.read_csv(out / "values.csv")["value"].tolist() == [1.0, 2.0, 4.0]
    np.testing.assert_array_equal(np.load(out / "values.npy"), result.values)
    assert (out / "note.txt").read_text() == "plain text\n"
    assert json.loads((out / "extra.json").read_text()) == {"max": 4.0}
    width, height = _png_size(out / "sample.png")
    # the picture is drawn at the one resolution: 7 x 4.5 inches at FIGURE_DPI, before the
    # tight bounding box trims the margins
    assert 0.6 * 7 * FIGURE_DPI < width <= 7 * FIGURE_DPI
    assert 0.6 * 4.5 * FIGURE_DPI < height <= 4.5 * FIGURE_DPI
    assert _png_size(out / "hist.png")[0] > 0
    assert sorted(os.listdir(out)) == sorted(names)  # no temporary file left behind


def test_the_write_method_is_the_one_writer(tmp_path):
    result = make_sample()
    assert result.write(tmp_path / "a") == [
        tmp_path / "a" / p.name for p in write_outputs(result, tmp_path / "b")
    ]
    assert (tmp_path / "a" / "result.json").read_text() == (
        tmp_path / "b" / "result.json"
    ).read_text()


def test_a_result_without_plot_or_files_writes_only_its_json(tmp_path):
    written = write_outputs(Plain(1, 0.5, "a"), tmp_path)
    assert [p.name for p in written] == ["result.json"]


def test_write_outputs_refuses_an_output_path_that_is_a_file(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(InputError, match="out: expected a directory that can be created"):
        write_outputs(Plain(1, 0.5, "a"), blocker / "sub")


def test_a_failed_write_keeps_the_old_file_whole(tmp_path):
    target = tmp_path / "result.json"
    write_atomic(target, "old")

    def crash(path: Path) -> None:
        path.write_text("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_atomic(target, crash)
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["result.json"]


def test_json_text_never_writes_nan():
    assert json.loads(json_text({"x": math.inf, "y": [np.nan]})) == {"x": None, "y": [None]}


def test_numpy_dates_and_durations_become_iso_texts_not_nanoseconds():
    """numpy datetime64[ns] (what pandas' to_numpy gives) became an int of nanoseconds, and a
    timedelta was refused."""
    import datetime

    dates = np.array(["2024-01-02", "NaT"], dtype="datetime64[ns]")
    assert to_jsonable({"d": dates}) == {"d": ["2024-01-02T00:00:00.000000000", None]}
    assert to_jsonable(np.datetime64("2024-01-02", "D")) == "2024-01-02"
    assert to_jsonable(np.timedelta64(90, "s")) == "P0DT0H1M30S"
    assert to_jsonable(datetime.timedelta(seconds=90)) == "P0DT0H1M30S"
    assert to_jsonable(np.array([1, "NaT"], dtype="timedelta64[ms]")) == [
        "P0DT0H0M0.001S", None
    ]  # fmt: skip


def test_two_keys_that_become_one_json_key_are_refused_not_merged():
    # {1: "a", "1": "b"} became {"1": "b"}: the first value was lost without a word
    with pytest.raises(InputError, match=r"value\['g'\]: expected keys that stay distinct.*'1'"):
        to_jsonable({"g": {1: "a", "1": "b"}})
    assert to_jsonable({1: "a", "2": "b"}) == {"1": "a", "2": "b"}


def test_enums_and_plain_dataclasses_convert_to_their_values():
    import enum

    class Colour(enum.Enum):
        RED = 1

    class Kind(enum.StrEnum):
        A = "a"

    @dataclass(frozen=True)
    class Point:
        x: float
        where: Path
        kind: Kind
        cache: np.ndarray = internal_field(default=None)

    point = Point(np.float32("nan"), Path("p/q"), Kind.A, np.zeros(3))
    converted = to_jsonable({"c": Colour.RED, Colour.RED: [point], "s": np.str_("t")})
    assert converted == {"c": 1, "1": [{"x": None, "where": "p/q", "kind": "a"}], "s": "t"}
    assert [type(v) for v in converted["1"][0].values()] == [type(None), str, str]
    assert type(converted["s"]) is str


@pytest.mark.parametrize("check", [output_dir, check_output_dir])
def test_an_empty_output_folder_name_is_refused_not_read_as_the_working_folder(
    check, tmp_path, monkeypatch
):
    # Path("") is Path("."): SafetyPolytope.save("") wrote polytope.json into the working folder
    monkeypatch.chdir(tmp_path)
    for empty in ("", "  "):
        with pytest.raises(InputError, match="out_dir: expected a folder path"):
            check(empty)
    assert check(".") == Path(".")
    assert list(tmp_path.iterdir()) == []
