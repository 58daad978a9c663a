"""evaluate_regions: repeated deltas are refused (each repeated its ablation row), the summary
of one image says "1 image", and the images whose random same-area mask alone came out empty
(left out of the random precision only) are counted and said."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("skimage")

from cli_helpers import one_line, run_main  # noqa: E402
from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.regions import (  # noqa: E402
    RegionsEvaluation,
    checkpoint_data,
    evaluate_regions,
    load_checkpoint,
)
from trustlab.explain.regions import evaluation as evaluation_module  # noqa: E402
from trustlab.explain.regions.metrics import (  # noqa: E402
    localisation_precision,
    random_area_masks,
)


@pytest.fixture(scope="module")
def shipped():
    model = load_checkpoint("p2p_dynamic")  # shipped: a load failure is a failure, not a skip
    data = checkpoint_data("test", random_state=3).subset(np.arange(6))
    return model, data, np.asarray(data.class_names)[data.labels]


def test_repeated_deltas_are_refused_naming_them(shipped):
    model, data, y = shipped
    with pytest.raises(InputError, match=r"^deltas: expected distinct certainty thresholds "
                       r"\(0\.99 repeated\), got "):  # fmt: skip
        evaluate_regions({"m": model}, data.images, y, data.masks, deltas=(0.9, 0.99, 0.99))


def test_the_cli_refuses_repeated_deltas_in_one_line(shipped, capsys):
    code, _, err = run_main(
        ["explain", "regions", "evaluate", "--checkpoint", "p2p_dynamic", "--n", "2",
         "--deltas", "0.99,0.99"],
        capsys,
    )  # fmt: skip
    assert code == 2
    assert one_line(err).startswith(
        "trustlab: error: --deltas: expected distinct certainty thresholds (0.99 repeated)"
    ), err


def test_a_summary_of_one_image_says_image():
    row = {"model": "m", "kind": "dynamic", "accuracy": 1.0, "mean_kept": 0.1}
    one = RegionsEvaluation(dataset="d", n_images=1, object_fraction=0.04, accuracy=(row,),
                            localisation=(), fidelity=(), delta_ablation=())  # fmt: skip
    assert (
        one.summary().splitlines()[0] == "Region-sparse evaluation on d: 1 image, object area 4.0%"
    )


def test_random_masks_that_alone_came_out_empty_are_counted_and_said(shipped, monkeypatch):
    model, data, y = shipped

    def first_one_empty(*args, **kwargs):
        masks = random_area_masks(*args, **kwargs)
        masks[0] = False
        return masks

    monkeypatch.setattr(evaluation_module, "random_area_masks", first_one_empty)
    result = evaluate_regions({"m": model}, data.images, y, data.masks, deltas=(),
                              deletion=(), insertion=(), random_state=0)  # fmt: skip
    row = result.localisation[0]
    own = result.explanations["m"].mask
    assert own.any(axis=(1, 2)).all()  # the model's masks are all non-empty here
    assert row["empty_masks"] == 0.0 and row["random_empty_masks"] == pytest.approx(1 / 6)
    rnd = first_one_empty(result.explanations["m"].segments,
                          result.explanations["m"].kept_fraction, random_state=0)  # fmt: skip
    expected = np.nanmean(localisation_precision(rnd, data.masks))
    assert row["random_precision"] == pytest.approx(expected)
    assert "(random mask empty on 1 of 6 images where the model's is not, left out of random)" in (
        result.summary()
    )


def test_the_share_of_random_masks_alone_empty_matches_a_recomputation(shipped):
    model, data, y = shipped
    result = evaluate_regions({"m": model}, data.images, y, data.masks, deltas=(),
                              deletion=(), insertion=(), random_state=0)  # fmt: skip
    r = result.explanations["m"]
    rnd = random_area_masks(r.segments, r.kept_fraction, random_state=0)
    alone = r.mask.any(axis=(1, 2)) & ~rnd.any(axis=(1, 2))
    assert result.localisation[0]["random_empty_masks"] == pytest.approx(alone.mean())


def test_summaries_of_one_image_say_image(shipped, tmp_path, capsys):
    """'1 images' in the summaries of a dataset, predictions, dynamic tau and a fidelity curve,
    and '1 overlays' in predict's last line."""
    import torch

    from trustlab.explain.regions import deletion_curve, dynamic_tau

    model, data, _ = shipped
    one = data.subset([0])
    assert f"ImageDataset {one.name}: 1 image " in one.summary()
    r = model.explain(one.images)
    assert r.summary().startswith("Region-sparse predictions of 1 image with ")
    x, seg = torch.as_tensor(one.images), torch.as_tensor(r.segments)
    k = int(seg.max()) + 1
    dyn = dynamic_tau(lambda xx, ss, tt: torch.zeros(len(xx), k, dtype=xx.dtype),
                      lambda xx: torch.zeros(len(xx), 2), x, seg, 0.9)  # fmt: skip
    assert dyn.summary().startswith("Dynamic tau (batched) on 1 image, ")
    curve = deletion_curve(model.classifier_, x, r.segments, r.scores, (0.1,), fill=model.fill)
    assert curve.summary().startswith("Deletion fidelity (importance order) on 1 image:")
    code, out, err = run_main(
        ["explain", "regions", "predict", "--checkpoint", "p2p_dynamic", "--data",
         "bam-lite-shapes", "--n", "1", "--out", tmp_path / "p"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert out.strip().splitlines()[-1].endswith(f"and 1 overlay (overlays/) to {tmp_path / 'p'}")
