"""WMarkGPT's weight check on an empty or cut-short pytorch_model*.bin ended in torch's bare
EOFError (no text: the CLI said 'failed' naming no file)."""

from types import SimpleNamespace

import pytest

from trustlab.errors import BackendError
from trustlab.watermark.wmarkgpt import WMarkGPTBackend


@pytest.mark.parametrize("content", [b"", b"PK\x03\x04"], ids=["empty", "cut-short"])
def test_an_empty_weight_shard_is_named(tmp_path, content):
    torch = pytest.importorskip("torch")
    (tmp_path / "config.json").write_text("{}")
    shard = tmp_path / "pytorch_model.bin"
    shard.write_bytes(content)
    backend = WMarkGPTBackend(tmp_path)
    with pytest.raises(BackendError, match="pytorch_model.bin"):
        backend._check_weights(SimpleNamespace(state_dict=lambda: {"w": 0}), torch)
