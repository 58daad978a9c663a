"""Review 59: one conversion of an int seed to torch's 64-bit seeds, trustlab._numerics.torch_seed
(seed mod 2**64), used by seeded_torch and LocalModel's samplers. seeded_torch passed the seed as
it was, so federated runs with random_state >= 2**64 (which UEFLConfig accepts: an int >= 0)
failed with a raw ValueError (Overflow when unpacking long long) in build_model."""

from __future__ import annotations

import numpy as np
import torch

from trustlab._numerics import seeded_torch, torch_seed
from trustlab.federated import UEFLConfig
from trustlab.federated.model import build_model, model_arrays
from trustlab.llm._decoding import CpuSampler


def test_torch_seed_is_the_seed_torch_itself_takes_for_every_seed_it_accepts():
    rng = np.random.default_rng(59)
    edges = [0, 1, -1, 2**63 - 1, 2**63, -(2**63), 2**64 - 1]
    draws = [int(x) for x in rng.integers(-(2**63), 2**63, 2000)]
    draws += [int(x) + 2**63 for x in rng.integers(0, 2**63, 2000)]  # the upper half
    for seed in edges + draws:
        assert torch_seed(seed) == torch.Generator().manual_seed(seed).initial_seed()


def test_seeded_torch_takes_a_seed_beyond_64_bits_as_its_remainder():
    with seeded_torch(5):
        expected = torch.rand(4)
    with seeded_torch(2**64 + 5):  # ValueError before
        drawn = torch.rand(4)
    assert torch.equal(drawn, expected)


def test_a_federated_model_builds_from_a_random_state_beyond_64_bits():
    config = UEFLConfig(random_state=2**64)  # accepted: an integer >= 0
    spec = config.model_spec(16, 3, False)
    big = model_arrays(build_model(spec, random_state=config.random_state))
    zero = model_arrays(build_model(spec, random_state=0))
    assert big.keys() == zero.keys()
    assert all(np.array_equal(big[k], zero[k]) for k in big)


def test_the_local_sampler_seeds_through_the_same_conversion():
    sampler = CpuSampler(1.0, 2**64 + 7, torch)
    assert sampler.generator.initial_seed() == 7


def test_train_tfn_takes_a_seed_beyond_64_bits_as_its_remainder():
    # torch.manual_seed(int(random_state)) refused 2**64 + 3 with a raw ValueError
    from trustlab.explain.equigx import TensorFieldNetwork, shapes_in_noise, train_tfn

    data = shapes_in_noise(6, variant="same_count", n_nodes=6, random_state=0)
    seeds = []  # torch's stream seen by the network while it trains
    with seeded_torch(0):
        net = TensorFieldNetwork(n_classes=data.n_classes, n_scalars=data[0].x.shape[1])
        forward = net.forward
        net.forward = lambda *a, **k: seeds.append(torch.initial_seed()) or forward(*a, **k)
        history = train_tfn(net, data, max_epochs=1, batch_size=6, random_state=2**64 + 3)
        # train_tfn trains inside seeded_torch and restores the caller's stream afterwards
        # (review 59, 6f0dcba5), so the seed is read where the network runs
        assert torch.initial_seed() == 0
    assert seeds and set(seeds) == {3}  # torch's stream was seeded with the remainder
    assert np.isfinite(history.train_loss).all()


def test_region_draws_take_an_int_seed_beyond_64_bits_as_its_remainder():
    # generator=2**64 + 9 (an int seed, as documented) was a raw ValueError
    from trustlab.explain.regions.selection import relaxed_bernoulli

    probs = torch.full((2, 3), 0.5)
    drawn = relaxed_bernoulli(probs, 0.5, generator=2**64 + 9)
    assert torch.equal(drawn, relaxed_bernoulli(probs, 0.5, generator=9))
