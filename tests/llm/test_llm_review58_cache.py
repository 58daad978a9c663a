"""Review 58: a packaged GGUF (Gemma's, assembled from chunks) loads when the cache root cannot be
written, as a GGUF file does; writing the cache then warns."""

from __future__ import annotations

import pytest

from trustlab.llm import _cache as cache


def test_packaged_gguf_loads_when_the_cache_root_is_not_a_folder(tmp_path, monkeypatch):
    seen = []

    def assemble(folder):
        path = folder / "packaged.gguf"
        path.write_bytes(b"GGUF fake")
        return path

    def fake_load_gguf(path, torch_module):
        seen.append(path.read_bytes())
        return "model", "tokenizer"

    monkeypatch.setattr(cache, "_load_gguf", fake_load_gguf)
    source = cache.ModelSource("packaged", "gguf", None, "sha256:0", assemble)
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")  # TRUSTLAB_CACHE pointing at a file, or unwritable
    with pytest.warns(RuntimeWarning, match="could not cache"):
        loaded = cache.load_weights(source, blocked / "cache")
    assert loaded == ("model", "tokenizer") and seen == [b"GGUF fake"]
