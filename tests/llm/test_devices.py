"""Devices: ``device=`` of ``load_model``, ``SparseAutoencoder.encode`` and
``WatermarkPredictor.predict``; every LocalModel path on a GPU against the CPU.

The CUDA tests run only where torch sees a GPU (CI has none; they ran on a lent H200, see
docs/llm-runtime.md, "On a GPU"). The checks of the argument run everywhere.
"""

from __future__ import annotations

import copy
from types import SimpleNamespace

import numpy as np
import pytest

from tiny_llama import tiny_llama, word_tokenizer
from trustlab._checks import check_device, resolve_device
from trustlab.errors import ConfigError, InputError

torch = pytest.importorskip("torch")
CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not CUDA, reason="needs a GPU that torch sees")

WORDS = "the cat sat on a mat dog ran far away and then came back home to sleep".split()


def _fake_torch(count: int) -> SimpleNamespace:
    cuda = SimpleNamespace(is_available=lambda: count > 0, device_count=lambda: count)
    return SimpleNamespace(cuda=cuda)


@pytest.mark.parametrize("device", ["gpu", "CUDA", "cuda:", "cuda:x", "cuda:-1", "", None, 0])
def test_check_device_refuses_what_torch_would_not_read(device):
    with pytest.raises(InputError, match="device: expected"):
        check_device(device)


@pytest.mark.parametrize(
    ("count", "device", "expected"),
    [(0, "auto", "cpu"), (1, "auto", "cuda"), (2, "cuda:1", "cuda:1"), (0, "cpu", "cpu")],
)
def test_resolve_device(count, device, expected):
    assert resolve_device(_fake_torch(count), device) == expected


@pytest.mark.parametrize(("count", "device"), [(0, "cuda"), (0, "cuda:0"), (2, "cuda:2")])
def test_resolve_device_refuses_a_gpu_torch_does_not_see(count, device):
    with pytest.raises(ConfigError, match=f"device: '{device}' was asked for"):
        resolve_device(_fake_torch(count), device)


def test_load_model_checks_the_device_before_loading(monkeypatch, tmp_path):
    from trustlab.llm import load_model

    # before any weights are read: the source is not even resolved
    with pytest.raises(InputError, match="device: expected"):
        load_model("no such model", device="gpu")
    folder = tiny_llama(word_tokenizer(WORDS), len(WORDS) + 3).save(tmp_path / "tiny")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ConfigError, match="no GPU"):
        load_model(folder, device="cuda")
    assert load_model(folder, device="auto").model.device.type == "cpu"


@pytest.fixture(scope="module")
def pair():
    """The same tiny Llama on the CPU and (a copy) on the GPU."""
    cpu = tiny_llama(word_tokenizer(WORDS), len(WORDS) + 3, hidden_size=64, seed=3)
    from trustlab.llm import LocalModel

    gpu = LocalModel(copy.deepcopy(cpu.model).to("cuda"), cpu.tokenizer, name="tiny-llama")
    return cpu, gpu


PROMPTS = ["the cat sat on", "a dog ran far away and then", "home", "the mat"]


@needs_cuda
def test_greedy_completions_and_top_logprobs_match_the_cpu(pair):
    cpu, gpu = pair
    a = cpu.completions(PROMPTS, 6, chat=False, top_logprobs=5, batch_size=3)
    b = gpu.completions(PROMPTS, 6, chat=False, top_logprobs=5, batch_size=3)
    assert [c.tokens for c in a] == [c.tokens for c in b]
    np.testing.assert_allclose(
        np.concatenate([c.logprobs for c in a]), np.concatenate([c.logprobs for c in b]), atol=1e-4
    )
    top_a = [v for c in a for pos in c.top_logprobs for _, v in pos]
    top_b = [v for c in b for pos in c.top_logprobs for _, v in pos]
    np.testing.assert_allclose(top_a, top_b, atol=1e-4)


@needs_cuda
def test_seeded_sampling_draws_on_the_cpu_whatever_the_device(pair):
    cpu, gpu = pair
    kwargs = dict(chat=False, temperature=1.0, top_p=0.9, random_state=11)
    a = cpu.completions(PROMPTS, 8, **kwargs)
    b = gpu.completions(PROMPTS, 8, **kwargs)
    assert [c.tokens for c in a] == [c.tokens for c in b]


@needs_cuda
def test_seeded_generate_draws_on_the_cpu_and_leaves_the_gpu_stream(pair):
    # review 58: not yet run on a GPU (none was lent); CPU half in test_llm_review58_rng.py
    cpu, gpu = pair
    kwargs = dict(chat=False, temperature=1.0, random_state=11)
    torch.cuda.manual_seed(123)
    before = torch.cuda.get_rng_state()
    b = gpu.generate(PROMPTS, 8, **kwargs)
    assert torch.equal(torch.cuda.get_rng_state(), before)
    assert cpu.generate(PROMPTS, 8, **kwargs) == b


@needs_cuda
@pytest.mark.parametrize("share_prefix", [False, True])
def test_logprobs_match_the_cpu(pair, share_prefix):
    cpu, gpu = pair
    prompts = ["the cat sat on the mat and then"] * 3
    conts = ["came back home", "ran far away", "sat"]
    a = cpu.logprobs(prompts, conts, share_prefix=share_prefix)
    b = gpu.logprobs(prompts, conts, share_prefix=share_prefix)
    np.testing.assert_allclose(a, b, atol=1e-4)


@needs_cuda
@pytest.mark.parametrize("positions", ["last", "mean", "all"])
def test_activations_match_the_cpu(pair, positions):
    cpu, gpu = pair
    a = cpu.activations(PROMPTS, layers=[0, 1], positions=positions, chat=False, batch_size=2)
    b = gpu.activations(PROMPTS, layers=[0, 1], positions=positions, chat=False, batch_size=2)
    for x, y in zip(a, b, strict=True):
        assert isinstance(y, np.ndarray) and y.dtype == np.float32
        np.testing.assert_allclose(x, y, atol=1e-4)


@needs_cuda
def test_bfloat16_autocast_runs_on_the_gpu(pair):
    cpu, gpu = pair
    exact = cpu.activations(PROMPTS, layers=1, chat=False)
    low = gpu.activations(PROMPTS, layers=1, chat=False, autocast="bfloat16")
    assert np.linalg.norm(low - exact) <= 0.05 * np.linalg.norm(exact)


@needs_cuda
def test_steering_on_the_gpu_matches_the_cpu(pair):
    cpu, gpu = pair
    vector = np.linspace(-1.0, 1.0, 64).astype(np.float32)
    with cpu.steer(vector, 0, 2.0):
        a = cpu.activations(PROMPTS, layers=1, chat=False)
    with gpu.steer(vector, 0, 2.0):
        b = gpu.activations(PROMPTS, layers=1, chat=False)
    np.testing.assert_allclose(a, b, atol=1e-4)


@pytest.fixture(scope="module")
def sae():
    from trustlab.interpret import SparseAutoencoder

    rng = np.random.default_rng(5)
    return SparseAutoencoder(n_latents=96, k=4, max_epochs=2, batch_size=64).fit(
        rng.normal(size=(512, 64)).astype(np.float32), model_name="tiny-llama", layer=1
    )


@needs_cuda
@pytest.mark.parametrize("sparse", [False, True])
def test_sae_encode_on_the_gpu_matches_the_cpu(sae, sparse):
    X = np.random.default_rng(6).normal(size=(300, 64)).astype(np.float32)
    a = sae.encode(X, sparse=sparse, batch_size=128)
    b = sae.encode(X, sparse=sparse, batch_size=128, device="cuda")
    if sparse:
        assert b.format == "csr" and b.dtype == np.float32
        a, b = a.toarray(), b.toarray()
    np.testing.assert_allclose(a, b, atol=1e-4)


@needs_cuda
def test_cache_latents_encodes_on_the_models_gpu(pair, sae):
    from trustlab.interpret import cache_latents

    cpu, gpu = pair
    texts = [" ".join(WORDS[i : i + 7]) for i in range(0, 12, 2)]
    a = cache_latents(cpu, sae, texts, batch_size=3)
    b = cache_latents(gpu, sae, texts, batch_size=3)
    assert a.n_records == b.n_records and a.n_tokens == b.n_tokens
    for name in ("latent_offsets", "contexts", "positions", "tokens"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    np.testing.assert_allclose(a.activations, b.activations, atol=1e-4)


def test_sae_encode_checks_the_device(sae, monkeypatch):
    X = np.zeros((3, 64), np.float32)
    with pytest.raises(InputError, match="device: expected"):
        sae.encode(X, device="gpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ConfigError, match="no GPU"):
        sae.encode(X, device="cuda")
    np.testing.assert_array_equal(sae.encode(X, device="auto"), sae.encode(X))


@pytest.fixture(scope="module")
def predictor():
    from trustlab.watermark.nr import WatermarkPredictor
    from trustlab.watermark.synth import synthesize

    data = synthesize(6, random_state=4, kinds=("logo", "text"))
    model = WatermarkPredictor(input_size=64, widths=(8, 8, 8, 8), max_epochs=1, batch_size=3)
    model.fit(data.images, scores=data.scores, masks=data.masks, content_types=data.content_types)
    return model, data


def test_predict_checks_the_device(predictor, monkeypatch):
    model, data = predictor
    with pytest.raises(InputError, match="device: expected"):
        model.predict(data.images[:1], device="gpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ConfigError, match="no GPU"):
        model.predict(data.images[:1], device="cuda")
    auto = model.predict(data.images, device="auto")
    np.testing.assert_array_equal(auto.scores, model.predict(data.images).scores)


@needs_cuda
def test_predict_on_the_gpu_matches_the_cpu(predictor):
    model, data = predictor
    a = model.predict(data.images, batch_size=4)
    b = model.predict(data.images, batch_size=4, device="cuda")
    np.testing.assert_allclose(a.scores, b.scores, atol=1e-4)
    np.testing.assert_allclose(
        a.heatmaps.astype(np.float64), b.heatmaps.astype(np.float64), atol=2e-3
    )
    assert next(model.net_.parameters()).device.type == "cpu"  # the model stayed where it was


@needs_cuda
def test_the_shipped_predictor_on_the_gpu_matches_the_cpu():
    """In float32 proper: with cuDNN's default TF32, scores moved by 2.4e-3 and a level in 64
    changed on an H200; predict turns TF32 off for its pass and restores the flags."""
    from trustlab.watermark.checkpoints import load_checkpoint
    from trustlab.watermark.synth import synthesize

    model = load_checkpoint()
    images = synthesize(64, random_state=21).images
    torch.backends.cudnn.allow_tf32 = True
    a = model.predict(images, batch_size=8)
    b = model.predict(images, batch_size=32, device="cuda")
    assert torch.backends.cudnn.allow_tf32  # restored
    np.testing.assert_allclose(a.scores, b.scores, atol=1e-4)
    assert a.levels == b.levels and a.cells == b.cells


def test_stacking_bytes_on_the_device_equals_the_per_image_path():
    from trustlab.watermark.nr import _stack

    rng = np.random.default_rng(8)
    images = [rng.integers(0, 256, size=(32, 32, 3), dtype=np.uint8) for _ in range(3)]
    fast = _stack(images, 32)
    slow = torch.stack([torch.from_numpy(im).permute(2, 0, 1).float() / 255.0 for im in images])
    assert fast.is_contiguous() and fast.dtype == torch.float32
    torch.testing.assert_close(fast, slow, rtol=0, atol=0)
    resized = _stack([*images[:2], rng.integers(0, 256, size=(40, 36, 3), dtype=np.uint8)], 32)
    assert resized.shape == (3, 3, 32, 32)
    torch.testing.assert_close(resized[:2], slow[:2], rtol=0, atol=0)


def _fit_tiny(data, **kwargs):
    from trustlab.watermark.nr import WatermarkPredictor

    params = {"input_size": 64, "widths": (8, 8, 8, 8), "max_epochs": 2, "batch_size": 3}
    model = WatermarkPredictor(**{**params, **kwargs.pop("params", {})})
    return model.fit(
        data.images, scores=data.scores, masks=data.masks, content_types=data.content_types,
        **kwargs,
    )  # fmt: skip


def test_fit_checks_the_device_before_training(predictor, monkeypatch):
    _, data = predictor
    calls = []
    with pytest.raises(InputError, match="device: expected"):
        _fit_tiny(data, device="gpu", progress=lambda *a: calls.append(a))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ConfigError, match="no GPU"):
        _fit_tiny(data, device="cuda", progress=lambda *a: calls.append(a))
    assert calls == []  # refused before the first epoch
    auto = _fit_tiny(data, device="auto")  # the CPU here: the same weights as the default
    default = _fit_tiny(data)
    for (k, a), b in zip(
        auto.net_.state_dict().items(), default.net_.state_dict().values(), strict=True
    ):
        torch.testing.assert_close(a, b, rtol=0, atol=0, msg=k)


@needs_cuda
def test_fit_on_the_gpu_matches_the_cpu(predictor):
    """Same batches and flips (the CPU generator's), float32 proper: two epochs of Adam on a GPU
    land within rounding of the CPU's, and the fitted network comes back to the CPU."""
    _, data = predictor
    cpu, gpu = _fit_tiny(data), _fit_tiny(data, device="cuda")
    assert next(gpu.net_.parameters()).device.type == "cpu"
    np.testing.assert_allclose(gpu.history_.loss, cpu.history_.loss, rtol=1e-4)
    a, b = cpu.predict(data.images), gpu.predict(data.images)
    np.testing.assert_allclose(a.scores, b.scores, atol=1e-3)


@needs_cuda
def test_a_fit_interrupted_on_the_gpu_resumes_on_the_cpu(predictor, tmp_path):
    _, data = predictor

    def stop(epoch, total, history):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _fit_tiny(data, device="cuda", params={"checkpoint_dir": tmp_path}, progress=stop)
    resumed = _fit_tiny(data, params={"checkpoint_dir": tmp_path})
    full = _fit_tiny(data, device="cuda")
    assert resumed.history_.epoch == (1, 2)
    np.testing.assert_allclose(resumed.history_.loss, full.history_.loss, rtol=1e-4)
