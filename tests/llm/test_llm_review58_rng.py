"""Review 58: seeded LocalModel.generate draws its tokens on the CPU from a private generator.

It used to seed torch's global stream inside ``fork_rng(devices=[])``: ``torch.manual_seed`` also
reseeded every GPU's stream (not forked), and transformers sampled with the global generator of
the model's device, so on a GPU a seed gave other tokens than on the CPU (docs/llm-runtime.md,
"On a GPU", says it gives the same). tests/llm/test_devices.py checks both on a GPU.
"""

from __future__ import annotations

from tiny_llama import tiny_llama, word_tokenizer


def test_seeded_generate_reseeds_no_gpu_and_draws_from_a_private_cpu_generator(monkeypatch):
    import torch

    words = "the cat sat on a mat".split()
    lm = tiny_llama(word_tokenizer(words), len(words) + 3, hidden_size=16)
    seeded, draws = [], []
    for name in ("manual_seed", "manual_seed_all"):
        monkeypatch.setattr(torch.cuda, name, lambda seed, name=name: seeded.append(name))
    multinomial = torch.multinomial

    def recording(probs, *args, **kwargs):
        draws.append((probs.device.type, kwargs.get("generator") is not None))
        return multinomial(probs, *args, **kwargs)

    monkeypatch.setattr(torch, "multinomial", recording)
    texts = lm.generate(["the cat", "a mat"], 3, chat=False, temperature=1.0, random_state=4)
    assert len(texts) == 2
    assert seeded == []  # no GPU stream seeded
    assert draws and all(d == ("cpu", True) for d in draws)  # every draw: CPU, private generator
