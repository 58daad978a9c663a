"""Language-model runtime: local models (GGUF or Hugging Face folders through transformers) with
activation capture and steering, OpenAI-compatible endpoints, and a resumable result store.

Public names are imported from their module on first use, so ``import trustlab.llm`` stays cheap
and works without the ``llm`` extra until a model is actually needed.
"""

from __future__ import annotations

from trustlab._lazy import lazy_names

# module -> the public names it defines
__getattr__, __all__, __dir__ = lazy_names(
    __name__,
    {
        ".runtime": ["available_models", "load_model", "LocalModel"],
        ".remote": ["RemoteModel"],
        ".store": ["ResultStore"],
        ".server": ["serve", "make_server"],
    },
)
