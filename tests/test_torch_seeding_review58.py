"""Review 58: seeded torch work leaves every GPU random stream alone.

digits_model, federated's build_model / train_silo / mc_dropout_probabilities, lora_backdoor's
adapters and WMarkGPT's answers ran ``torch.manual_seed(seed)`` inside
``torch.random.fork_rng(devices=[])``. ``torch.manual_seed`` also calls
``torch.cuda.manual_seed_all``, whose streams were not forked, so on a GPU machine the caller's
GPU streams were reseeded. Now they seed through ``trustlab._numerics.seeded_torch``: the CPU
stream as before (the same draws) and no GPU stream unless CUDA is in use, then forked.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from trustlab._numerics import seeded_torch
from trustlab.federated import Silo, simulate_uefl
from trustlab.robustness import digits_model
from trustlab.safety.transfer import lora_backdoor, tiny_language_model, word_tokenizer


@pytest.fixture
def gpu_seeding(monkeypatch):
    """Every seed given to torch.cuda's seeding functions, which are recorded, not run."""
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        pytest.skip("CUDA is in use: its streams are forked and seeded (the CUDA test below)")
    calls = []
    for name in ("manual_seed", "manual_seed_all"):
        monkeypatch.setattr(torch.cuda, name, lambda seed, name=name: calls.append((name, seed)))
    return calls


def test_seeded_torch_draws_as_manual_seed_and_restores_the_stream(gpu_seeding):
    before = torch.get_rng_state()
    with seeded_torch(2024):
        ours = torch.rand(5)
    assert torch.equal(torch.get_rng_state(), before)
    torch.manual_seed(2024)
    assert torch.equal(torch.rand(5), ours)
    torch.set_rng_state(before)
    gpu_seeding.clear()  # torch.manual_seed's own call above
    with seeded_torch(7):
        pass
    assert gpu_seeding == []


def test_seeded_models_reseed_no_gpu_stream(gpu_seeding):
    before = torch.get_rng_state()
    digits_model("mlp", n_features=16, n_classes=3, hidden=8, random_state=7)
    rng = np.random.default_rng(0)
    X, y = rng.random((8, 6), dtype=np.float32), np.arange(8) % 2
    simulate_uefl([Silo(X, y, X, y), Silo(X, y, X, y)], encoder="mlp", rounds=1, rounds_plus=1,
                  mc_passes=2, max_iterations=1, threshold_factor=0.0, random_state=3)  # fmt: skip
    words = "the cat sat on a mat".split()
    base = tiny_language_model([" ".join(words)], tokenizer=word_tokenizer(words), n_layers=1,
                               hidden_size=16, n_heads=2, max_epochs=1, random_state=1)  # fmt: skip
    lora_backdoor(base, [("the cat", "sat")], rank=2, max_epochs=1, random_state=5)
    assert gpu_seeding == []  # was [('manual_seed_all', 7), ...] from every one of them
    assert torch.equal(torch.get_rng_state(), before)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_streams_are_forked_and_seeded_where_cuda_is_in_use():
    torch.cuda.init()
    torch.cuda.manual_seed_all(11)
    before = torch.cuda.get_rng_state()
    with seeded_torch(3):
        first = torch.rand(4, device="cuda").cpu()
    assert torch.equal(torch.cuda.get_rng_state(), before)
    with seeded_torch(3):
        assert torch.equal(torch.rand(4, device="cuda").cpu(), first)
    model = digits_model("mlp", n_features=16, n_classes=3, hidden=8, random_state=7)
    assert torch.equal(torch.cuda.get_rng_state(), before)
    assert np.isfinite(model[0].weight.detach().numpy()).all()
