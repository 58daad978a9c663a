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
