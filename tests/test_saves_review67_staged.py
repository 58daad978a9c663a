"""An overwrite of a saved model stopped inside the arrays' write keeps the earlier model (review
67). Review 65 made seven savers remove the earlier description before writing the new arrays (no
new arrays under an old description), which lost review 64's property: stopped inside the arrays'
write (Ctrl-C, a full disk), the folder held the earlier arrays without their description, so
the earlier model was gone. Measured on 1b2aaee5: each of ActivationMap, SteeringVector,
save_base_model, SafetyPolytope, SparseAutoencoder, LatentCache and ANOVATPNN stopped there left
a folder its loader refused. Now all of them (and write_model_folder, TensorFieldNetwork) save
through trustlab._results.replace_saved: the new arrays are written whole aside first, then the
earlier description goes, the arrays are renamed into place and the description written."""

from __future__ import annotations

from contextlib import ExitStack, contextmanager
from pathlib import Path
from unittest import mock

import numpy as np
import pytest

import trustlab._results as results
from interrupted_saves import stopped_at
from trustlab.errors import TrustlabError


def _map():
    import trustlab.safety.transfer.mapping as mapping

    rng = np.random.default_rng(0)
    x = rng.normal(size=(20, 4))

    def make(seed, layer):
        y = x @ np.random.default_rng(seed).normal(size=(4, 3))
        return mapping.ActivationMap(kind="affine").fit(x, y, source_layer=layer)

    def state(m):
        return [getattr(m, n + "_") for n in mapping.WEIGHT_NAMES["affine"]] + [m.source_layer_]

    return dict(
        module=mapping, a=make(1, 3), b=make(2, 7), save=lambda m, f: m.save(f),
        load=mapping.load_activation_map, state=state,
        arrays=mapping.WEIGHTS_FILE, descriptions=[mapping.PARAMS_FILE],
    )  # fmt: skip


def _vector():
    import trustlab.safety.transfer.vectors as vectors

    def make(seed, layer, model):
        values = np.random.default_rng(seed).normal(size=8)
        return vectors.SteeringVector(
            vector=values, layer=layer, kind="diff_in_means", model=model, n_pairs=None,
            n_positive=3, n_negative=3,
        ).unit()  # fmt: skip

    return dict(
        module=vectors, a=make(0, 3, "base"), b=make(1, 5, "tuned"), save=lambda v, f: v.save(f),
        load=vectors.load_steering_vector, state=lambda v: [v.vector, v.layer, v.model],
        arrays=vectors.TENSOR_FILE, descriptions=[vectors.JSON_FILE],
    )  # fmt: skip


def _digits():
    pytest.importorskip("torch")
    digits = pytest.importorskip("trustlab.robustness.digits")

    def state(saved):  # (model, sigma) as given to save_base_model, or the model it loaded
        model, sigma = saved if isinstance(saved, tuple) else (saved, None)
        sigma = model.trustlab_description["sigma"] if sigma is None else sigma
        return [t.detach().numpy() for t in model.state_dict().values()] + [sigma]

    return dict(
        module=digits, a=(digits.digits_model(hidden=8, random_state=0), 0.25),
        b=(digits.digits_model(hidden=8, random_state=1), 0.5),
        save=lambda ms, f: digits.save_base_model(ms[0], f, sigma=ms[1]),
        load=digits.load_base_model, state=state,
        arrays=digits.WEIGHTS_FILE, descriptions=[digits.DESCRIPTION_FILE],
    )  # fmt: skip


def _polytope():
    import trustlab.safety.polytope.estimator as estimator

    def make(normal, offset, layer):
        return estimator.SafetyPolytope.from_parameters([normal], [offset], layer=layer)

    return dict(
        module=estimator, a=make([1.0, 0.0], 1.0, 2), b=make([0.0, 1.0], 5.0, 7),
        save=lambda p, f: p.save(f), load=estimator.SafetyPolytope.load,
        state=lambda p: [p.normals_, p.offsets_, p.layer],
        arrays=estimator.ARRAYS_FILE, descriptions=[estimator.PARAMS_FILE],
    )  # fmt: skip


def _sae():
    pytest.importorskip("safetensors")
    import trustlab.interpret.sae.model as sae_model

    def make(seed, k):
        rng = np.random.default_rng(seed)
        return sae_model.SparseAutoencoder.from_weights(
            rng.normal(size=(4, 8)), np.zeros(8), rng.normal(size=(8, 4)), np.zeros(4), k=k
        )

    return dict(
        module=sae_model, a=make(0, 2), b=make(1, 5), save=lambda s, f: s.save(f),
        load=sae_model.load_sae,
        state=lambda s: [getattr(s, n + "_") for n in sae_model.WEIGHT_NAMES] + [s.k],
        arrays=sae_model.WEIGHTS_FILE,
        descriptions=[sae_model.CFG_FILE, sae_model.TRUSTLAB_FILE],
    )  # fmt: skip


def _cache():
    import trustlab.interpret.sae.cache as cache

    def make(model, sae, activations):
        return cache.LatentCache(
            model=model, layer=1, n_latents=2, n_contexts=1, n_tokens=3,
            tokens=np.array([5, 6, 7], np.int64), token_offsets=np.array([0, 3]),
            latent_offsets=np.array([0, 1, 2]), contexts=np.array([0, 0], np.int32),
            positions=np.array([1, 2], np.int32),
            activations=np.array(activations, np.float32), sae=sae,
        )  # fmt: skip

    def state(c):
        return [getattr(c, n) for n in cache._ARRAYS + cache._SCALARS] + [c.sae]

    return dict(
        module=cache, a=make("old", "a" * 64, [1.0, 2.0]), b=make("new", "b" * 64, [9.0, 8.0]),
        save=lambda c, f: c.save(f), load=cache.load_latent_cache, state=state,
        arrays="latent_cache.npz", descriptions=["latent_cache.json"],
    )  # fmt: skip


def _anova():
    pytest.importorskip("torch")
    import trustlab.explain.anova_tpnn._saving as saving
    from trustlab.explain.anova_tpnn import ANOVATPNN

    x = np.random.default_rng(0).normal(size=(30, 2))

    def make(y):
        return ANOVATPNN(order=1, n_basis=2, max_epochs=1, random_state=0, n_jobs=1).fit(x, y)

    return dict(
        module=saving, a=make(3 * x[:, 0]), b=make(3000 * x[:, 0] + 5),
        save=lambda m, f: m.save(f), load=ANOVATPNN.load,
        state=lambda m: [m.predict(x), m._output_shift_, m._output_scale_],
        arrays=saving.MODEL_FILE, descriptions=[saving.META_FILE],
    )  # fmt: skip


SAVERS = {
    "ActivationMap": _map,
    "SteeringVector": _vector,
    "save_base_model": _digits,
    "SafetyPolytope": _polytope,
    "SparseAutoencoder": _sae,
    "LatentCache": _cache,
    "ANOVATPNN": _anova,
}


def _same(left, right):
    assert len(left) == len(right)
    for a, b in zip(left, right, strict=True):
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            np.testing.assert_array_equal(a, b)
        else:
            assert a == b


@contextmanager
def _cut_inside(module, file_name):
    """The arrays' file ``file_name`` (or its staged copy ``.<file_name>.new``) is begun, then
    stopped half written (KeyboardInterrupt), wherever the saver calls write_atomic from."""
    write = results.write_atomic
    names = {file_name, f".{file_name}.new"}

    def cut(path, data):
        if Path(path).name not in names:
            return write(path, data)

        def half(tmp):
            Path(tmp).write_bytes(b"\0" * 16)
            raise KeyboardInterrupt

        return write(path, half)

    with ExitStack() as patches:
        patches.enter_context(mock.patch.object(results, "write_atomic", cut))
        if hasattr(module, "write_atomic"):
            patches.enter_context(mock.patch.object(module, "write_atomic", cut))
        patches.enter_context(pytest.raises(KeyboardInterrupt))
        yield


@pytest.mark.parametrize("saver", list(SAVERS))
def test_stopped_inside_the_arrays_write_the_earlier_model_loads_as_it_was(saver, tmp_path):
    case = SAVERS[saver]()
    case["save"](case["a"], tmp_path)
    files = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    with _cut_inside(case["module"], case["arrays"]):
        case["save"](case["b"], tmp_path)
    # was: the earlier description removed, so the folder was no model at all
    _same(case["state"](case["load"](tmp_path)), case["state"](case["a"]))
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == files  # no stray copies


@pytest.mark.parametrize(
    ("saver", "stop"),
    [(name, i) for name in SAVERS for i in range(2 if name == "SparseAutoencoder" else 1)],
)
def test_stopped_before_the_description_nothing_loads(saver, stop, tmp_path):
    case = SAVERS[saver]()
    case["save"](case["a"], tmp_path)
    description = case["descriptions"][stop]
    with stopped_at(case["module"], description):
        case["save"](case["b"], tmp_path)
    assert not (tmp_path / description).exists()  # not A's description beside B's arrays
    assert not any(p.name.endswith(".new") for p in tmp_path.iterdir())
    with pytest.raises(TrustlabError):
        case["load"](tmp_path)
    case["save"](case["b"], tmp_path)  # a save that completes reads back as B
    _same(case["state"](case["load"](tmp_path)), case["state"](case["b"]))


def test_several_array_files_stopped_in_the_second_leave_the_earlier_model(tmp_path):
    results.replace_saved(tmp_path, {"a.bin": b"old a", "b.bin": b"old b"}, {"m.json": "old"})
    files = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    with stopped_at(results, ".b.bin.new"):  # a.bin's new copy was already staged
        results.replace_saved(tmp_path, {"a.bin": b"new a", "b.bin": b"new b"}, {"m.json": "new"})
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == files
    written = results.replace_saved(tmp_path, {"a.bin": b"A", "b.bin": b"B"}, {"m.json": "M"})
    assert [p.name for p in written] == ["a.bin", "b.bin", "m.json"]
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == {
        "a.bin": b"A", "b.bin": b"B", "m.json": b"M",
    }  # fmt: skip


def test_a_linked_weights_file_is_written_through_as_write_atomic_does(tmp_path):
    # 1b2aaee5's staged rename replaced such a link in write_model_folder by a plain file
    torch = pytest.importorskip("torch")
    from trustlab._model_files import read_model_folder, write_model_folder

    (tmp_path / "store").mkdir()
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "weights.safetensors").symlink_to(tmp_path / "store" / "w.safetensors")
    net = torch.nn.Linear(2, 1)
    write_model_folder(tmp_path / "m", {"format": "t"}, {"n": net})
    assert (tmp_path / "m" / "weights.safetensors").is_symlink()
    assert (tmp_path / "store" / "w.safetensors").is_file()
    _, states = read_model_folder(tmp_path / "m", "t", "the test")
    assert torch.equal(states["n"]["weight"], net.weight.detach())
