"""Review pass 55 (second reviewer): the background job that fills a packaged model's cache
loaded the model even where its copy was cached, so on a warm cache a test using the session's
``smollm2`` fixture waited for the worker's start, imports and load (14.6 s setup, against 7.7 s
without the worker) before its own load; with the copy cached it now loads nothing."""

import importlib.util

import pytest

import trustlab.llm
from background_helpers import SMOLLM2_CACHE, cache_model


def test_a_cached_model_is_not_loaded_again(tmp_path, monkeypatch):
    if importlib.util.find_spec(SMOLLM2_CACHE[1]["package"]) is None:
        pytest.skip("SmolLM2 is not installed")
    from trustlab.llm.registry import resolve_source

    name = SMOLLM2_CACHE[1]["name"]
    monkeypatch.setenv("TRUSTLAB_CACHE", str(tmp_path))
    (tmp_path / "models" / resolve_source(name).cache_key).mkdir(parents=True)

    def load(*args, **kwargs):
        raise AssertionError("loaded a model whose copy is cached")

    monkeypatch.setattr(trustlab.llm, "load_model", load)
    assert cache_model(**SMOLLM2_CACHE[1]) == "already cached"
