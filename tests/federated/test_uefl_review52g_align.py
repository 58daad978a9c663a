"""Shared codebook mode: books each silo fits by k-means are aligned before the first average."""

import numpy as np

from trustlab.federated import ProtocolDriver, SiloEvaluation, SiloUpdate, UEFLConfig
from trustlab.federated.protocol import align_codebook
from trustlab.federated.uefl import average_weights

BOOK = np.arange(12, dtype=np.float32).reshape(6, 2) ** 1.5


def _permuted(seed):
    return BOOK[np.random.default_rng(seed).permutation(len(BOOK))]


def test_averaging_aligned_permuted_copies_of_one_codebook_gives_that_codebook():
    copies = [_permuted(s) for s in range(4)]
    aligned = [copies[0]] + [align_codebook(copies[0], c) for c in copies[1:]]
    avg = average_weights([{"b": c} for c in aligned])["b"]
    assert np.allclose(avg, copies[0])  # the codebook, in the first copy's numbering


class PermutingEngine:
    """Every silo replies with its own numbering of one codebook for each book it just created."""

    def __init__(self, n_silos):
        self.n = n_silos

    def train(self, round_no, jobs):
        out = []
        for plan, arrays in jobs:
            reply = {"w": np.zeros(2)}
            key = f"vq.books.{plan.book_idx}"
            reply[key] = _permuted(10 * round_no + plan.silo) if plan.init_ext else arrays[key]
            if plan.book_idx:
                reply["vq.books.0"] = arrays["vq.books.0"]
            out.append(SiloUpdate(plan.silo, reply, 10, {"vq-loss": 0.0}))
        return out

    def evaluate(self, round_no, jobs):
        return [SiloEvaluation(p.silo, [0.1, 0.2, 0.9, 1.0][p.silo], 0.5, 5) for p, _ in jobs]


def test_shared_mode_averages_kmeans_books_codeword_by_matching_codeword():
    cfg = UEFLConfig(codebook_sharing="shared", rounds=1, rounds_plus=1, max_iterations=2,
                     evaluate_every_round=False)  # fmt: skip
    driver = ProtocolDriver(cfg, 4, {"w": np.zeros(2), "vq.books.0": np.zeros((6, 2))})
    driver.run(PermutingEngine(4))
    assert driver.state.extensions[0]["flagged"] == [2, 3]
    # Round 1: book 0 of every silo (k-means, own numbering); round 2: book 1 of silos 2, 3.
    for key in ("vq.books.0", "vq.books.1"):
        got = driver.arrays[key]
        assert np.array_equal(np.sort(got, axis=0), np.sort(BOOK, axis=0)), key
