"""The texts and training settings the ``trustlab interpret sae`` CLI tests share (the tiny model
folder they train on is the session fixture ``tiny_llama_folder`` in conftest.py)."""

TEXTS = [
    "Sparse autoencoders split activations into many rarely active latents.",
    "Each latent should stand for one thing a reader can name.",
    "The cat sat on the mat, and the dog lay by the door.",
    "Numbers such as 12, 345 and 6789 appear in many texts.",
] * 3
SETTINGS = ["--n-latents", 64, "--k", 4, "--max-epochs", 2, "--batch-size", 32, "--seed", 3]


def train_args(model, texts, layer=1):
    """The ``interpret sae train`` arguments for MODEL at LAYER on the TEXTS file (settings and
    ``--out`` are added by each test)."""
    return ["interpret", "sae", "train", "--model", model, "--layer", layer, "--texts", texts]


def explain_folder(tmp_path, cache, n_test=50):
    """``cache`` (a LatentCache) saved as tmp_path/cache and a template explain run folder,
    tmp_path/expl, that names it: explanations "cats" (latent 1) and "dogs" (latent 2)."""
    import json

    cache.save(tmp_path / "cache")
    expl = tmp_path / "expl"
    expl.mkdir()
    info = {"explainer": "template", "subject": "m", "cache": str(tmp_path / "cache"),
            "n_train": 4, "n_test": n_test, "min_examples": 1, "seed": 0}  # fmt: skip
    (expl / "result.json").write_text(json.dumps(info), encoding="utf-8")
    rows = [{"latent": 1, "text": "cats"}, {"latent": 2, "text": "dogs"}]
    (expl / "explanations.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return expl


def two_latent_cache(folder):
    """A 16-latent LatentCache saved in ``folder`` where latents 1 and 2 fire on 12 of 24
    contexts each (4 tokens per context) and 0 and 3..15 never do."""
    import numpy as np

    from trustlab.interpret import LatentCache

    n, half = 24, 12
    LatentCache(
        model="m", layer=1, n_latents=16, n_contexts=n, n_tokens=4 * n,
        tokens=np.arange(4 * n) % 50, token_offsets=np.arange(0, 4 * n + 1, 4),
        latent_offsets=np.array([0, 0, half, *[2 * half] * 14]),
        contexts=np.r_[np.arange(0, n, 2), np.arange(1, n, 2)].astype(np.int32),
        positions=np.ones(2 * half, np.int32),
        activations=np.linspace(1, 2, 2 * half).astype(np.float32), sae=None,
    ).save(folder)  # fmt: skip
