"""Tests of trustlab.watermark.export: the Position-lite rule against an independent interval
lookup, the Position-lite records, and the three stage folders in WMarkGPT's JSON schema."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from trustlab.errors import InputError
from trustlab.watermark.export import (
    STAGES,
    PositionLite,
    export_stages,
    position_label,
    position_lite,
)
from trustlab.watermark.synth import synthesize
from trustlab.watermark.vocabulary import CELLS

NAMES = {
    ("top", "left"): "Top-left",
    ("top", "middle"): "Middle-top",
    ("top", "right"): "Top-right",
    ("middle", "left"): "Middle-left",
    ("middle", "middle"): "Center",
    ("middle", "right"): "Middle-right",
    ("bottom", "left"): "Bottom-left",
    ("bottom", "middle"): "Middle-bottom",
    ("bottom", "right"): "Bottom-right",
}


def _oracle(a, b):
    """A's centre against B's extent: before it, within it (inclusive), after it."""
    ax, ay = (a[0] + a[2]) / 2, (a[1] + a[3]) / 2
    horiz = "left" if ax < b[0] else ("right" if ax > b[2] else "middle")
    vert = "top" if ay < b[1] else ("bottom" if ay > b[3] else "middle")
    return NAMES[(vert, horiz)]


box_st = st.tuples(
    st.integers(0, 200), st.integers(0, 200), st.integers(1, 60), st.integers(1, 60)
).map(lambda t: (t[0], t[1], t[0] + t[2], t[1] + t[3]))


@settings(max_examples=100, deadline=None)
@given(a=box_st, b=box_st)
def test_position_label_matches_interval_lookup(a, b):
    assert position_label(a, b) == _oracle(a, b)


def test_position_label_all_nine_cells():
    b = (40, 40, 60, 60)
    got = {
        position_label((x - 2, y - 2, x + 2, y + 2), b) for x in (10, 50, 90) for y in (10, 50, 90)
    }
    assert got == set(CELLS)
    assert position_label((80, 80, 90, 90), (0, 0, 20, 20)) == "Bottom-right"
    assert position_label((0, 0, 10, 10), (50, 0, 70, 10)) == "Middle-left"


def test_position_lite_records_and_determinism():
    pos = position_lite(6, random_state=4)
    assert isinstance(pos, PositionLite) and pos.images.shape == (6, 256, 256, 3)
    again = position_lite(6, random_state=4)
    np.testing.assert_array_equal(pos.images, again.images)
    assert pos.records == again.records
    assert position_lite(6, random_state=5).records != pos.records
    for i, r in enumerate(pos.records):
        assert r["image"] == r["id"] == f"position_{i:05d}.png"
        human, gpt = r["conversations"]
        assert human["from"] == "human" and gpt["from"] == "gpt"
        sub, ref = r["structured"]["subject"], r["structured"]["reference"]
        assert sub["name"] != ref["name"]
        assert human["value"].startswith("<|image|>")
        assert sub["name"] in human["value"] and ref["name"] in human["value"]
        assert gpt["value"] == _oracle(sub["box"], ref["box"])
        names = [o["name"] for o in r["structured"]["objects"]]
        assert names.count(sub["name"]) == 1 and names.count(ref["name"]) == 1
    assert sum(pos.label_counts.values()) == 6
    json.dumps(pos.records)


def stub(facts, random_state=None):
    return f"A {facts.content_type} watermark. The watermark visibility is: {facts.level}."


def test_export_stages_writes_the_authors_schema(tmp_path):
    ds = synthesize(3, random_state=2)
    out = export_stages(ds, tmp_path, describer=stub, n_position=2, random_state=1)
    assert out.counts == {"WQA-Position": 2, "WQA-Synthetic": 3, "WQA-Real": 0}
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(STAGES)
    syn = json.loads((tmp_path / "WQA-Synthetic" / "train.json").read_text())
    assert [list(r) for r in syn] == [
        ["image", "id", "gt_score", "visibility", "conversations"]
    ] * 3
    for i, r in enumerate(syn):
        assert r["visibility"] == ds.levels[i]
        assert r["conversations"][1]["value"].endswith(
            f"The watermark visibility is: {ds.levels[i]}."
        )
        back = np.asarray(Image.open(tmp_path / "WQA-Synthetic" / "images" / r["image"]))
        np.testing.assert_array_equal(back, ds.images[i])
    structured = json.loads((tmp_path / "WQA-Synthetic" / "structured.json").read_text())
    assert [s["cell"] for s in structured] == list(ds.cells)
    pos = json.loads((tmp_path / "WQA-Position" / "train.json").read_text())
    assert [list(r) for r in pos] == [["image", "id", "conversations"]] * 2
    assert all(r["conversations"][1]["value"] in CELLS for r in pos)
    assert all((tmp_path / "WQA-Position" / "images" / r["image"]).is_file() for r in pos)
    assert json.loads((tmp_path / "WQA-Real" / "train.json").read_text()) == []
    assert "empty" in (tmp_path / "WQA-Real" / "README.txt").read_text()
    assert "WQA-Synthetic 3" in out.summary()


def test_bad_input_names_the_argument(tmp_path):
    ds = synthesize(1, random_state=0)
    with pytest.raises(InputError, match="format"):
        export_stages(ds, tmp_path, format="coco", describer=stub)
    with pytest.raises(InputError, match="dataset"):
        export_stages([1, 2], tmp_path, describer=stub)
    with pytest.raises(InputError, match="n_position"):
        export_stages(ds, tmp_path, describer=stub, n_position=0)
    with pytest.raises(InputError, match="position"):
        export_stages(ds, tmp_path, describer=stub, position="x")
    with pytest.raises(InputError, match="n"):
        position_lite(0)
    with pytest.raises(InputError, match="random_state"):
        position_lite(2, random_state=-1)
    with pytest.raises(InputError, match="size"):
        position_lite(2, size=16)
    with pytest.raises(InputError, match="box_b"):
        position_label((0, 0, 1, 1), (5, 5, 5, 9))


def test_a_users_real_stage_is_kept_by_a_later_export(tmp_path):
    # review 60: export (CLI --overwrite too) replaced the user's WQA-Real/train.json with []
    ds = synthesize(2, random_state=2)
    export_stages(ds, tmp_path, describer=stub, n_position=1)
    real = tmp_path / "WQA-Real" / "train.json"
    mine = '[{"image": "r.png", "id": "r", "conversations": []}]'
    real.write_text(mine)
    again = export_stages(ds, tmp_path, describer=stub, n_position=1)
    assert real.read_text() == mine
    assert again.counts["WQA-Real"] == 1 and str(real) not in again.files
    real.write_text("[]")  # an export's own empty list is rewritten
    assert export_stages(ds, tmp_path, describer=stub, n_position=1).counts["WQA-Real"] == 0
