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


def test_a_killed_assembly_is_swept_by_the_next_cache_write(tmp_path, monkeypatch):
    import os
    import time

    class Saved:  # a model / tokenizer double: save_pretrained writes one file
        def save_pretrained(self, folder):
            (folder / f"{id(self)}.json").write_text("{}")

    monkeypatch.setattr(cache, "_load_gguf", lambda path, torch_module: (Saved(), Saved()))
    models = tmp_path / "models"
    killed, running = models / ".assemble-killed", models / ".assemble-running"
    for folder in (killed, running):  # left by a SIGKILL / in use by another process
        folder.mkdir(parents=True)
        (folder / "gemma.gguf").write_bytes(b"GGUF partial")
    os.utime(killed, (time.time() - 2 * 3600,) * 2)
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF fake")
    source = cache.ModelSource("m", "gguf", gguf, cache.file_identity(gguf))
    cache.load_weights(source, tmp_path)
    assert sorted(p.name for p in models.iterdir()) == [".assemble-running", source.cache_key]
