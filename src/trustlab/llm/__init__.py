"""Language-model runtime: local models (GGUF or Hugging Face folders through transformers) with
activation capture and steering, OpenAI-compatible endpoints, and a resumable result store.

Public names are imported from their module on first use, so ``import trustlab.llm`` stays cheap
and works without the ``llm`` extra until a model is actually needed.
"""

from __future__ import annotations

from trustlab._lazy import lazy_getattr

# public name -> the module that defines it
_LAZY = {
    "available_models": "trustlab.llm.runtime",
    "load_model": "trustlab.llm.runtime",
    "LocalModel": "trustlab.llm.runtime",
    "RemoteModel": "trustlab.llm.remote",
    "ResultStore": "trustlab.llm.store",
    "serve": "trustlab.llm.server",
    "make_server": "trustlab.llm.server",
}

__all__ = list(_LAZY)

__getattr__ = lazy_getattr("trustlab.llm", _LAZY)
