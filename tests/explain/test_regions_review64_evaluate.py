"""evaluate_regions on edge inputs (review 64): images without an object pixel (all masks empty)
stopped the whole evaluation with 'truth: expected at least one ground-truth pixel' (no argument
of evaluate_regions) although precision and IoU are defined there; PxAP is now None (undefined,
shown as '-'). deltas=0.9, ('a',) or None raised a raw TypeError/ValueError and a numpy array of
deletion levels 'truth value of an array is ambiguous'; a level outside (0, 1] was refused as
'fractions'. Each is now an InputError naming the argument. ``evaluate --deltas ,,`` skipped the
delta ablation without a word ('none' does that); now exit code 2."""

from __future__ import annotations

import numpy as np
import pytest

from cli_helpers import one_line, run_main

pytest.importorskip("torch")
pytest.importorskip("skimage")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.regions import (  # noqa: E402
    bam_lite,
    evaluate_regions,
    load_checkpoint,
)


@pytest.fixture(scope="module")
def shipped():
    data = bam_lite(2, size=64, label="object", object_source="shapes", random_state=3)
    return load_checkpoint("p2p_fixed"), data, np.asarray(data.class_names)[data.labels]


def test_no_object_pixel_gives_no_pxap(shipped):
    model, data, y = shipped
    empty = np.zeros_like(data.masks)
    ev = evaluate_regions({"f": model}, data.images, y, empty, deltas=(), deletion=(),
                          insertion=())  # fmt: skip
    row = ev.localisation[0]
    assert row["pxap"] is None
    assert row["precision"] == 0.0 and row["iou"] == 0.0  # a kept pixel is never inside
    assert " / -; random" in ev.summary()


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [({"deltas": 0.9, "deletion": (2.0,)}, "deletion"), ({"deltas": ("a",)}, "deltas"),
     ({"deltas": None}, "deltas"), ({"deltas": (True,)}, "deltas"),
     ({"deltas": (), "insertion": np.array([0.5, 0.0])}, "insertion")],
)  # fmt: skip
def test_bad_levels_name_their_argument(shipped, kwargs, argument):
    model, data, y = shipped
    with pytest.raises(InputError) as info:
        evaluate_regions({"f": model}, data.images, y, data.masks, **kwargs)
    assert info.value.argument == argument


def test_levels_as_arrays_and_a_number(shipped):
    model, data, y = shipped
    ev = evaluate_regions({"f": model}, data.images, y, data.masks, deltas=np.array([]),
                          deletion=np.array([0.1, 0.2]), insertion=0.9)  # fmt: skip
    assert [r["fractions"] for r in ev.fidelity] == [[0.1, 0.2], [0.9]]


def test_cli_deltas_without_a_number_is_refused(capsys):
    code, _, err = run_main(["explain", "regions", "evaluate", "--checkpoint", "p2p_fixed",
                             "--n", "2", "--deltas", ",,"], capsys)  # fmt: skip
    assert code == 2
    assert one_line(err) == (
        "trustlab: error: --deltas: expected comma-separated numbers in (0, 1] or 'none', got ',,'"
    )
