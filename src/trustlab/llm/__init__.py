"""Language-model runtime: local models (GGUF or Hugging Face folders through transformers) with
activation capture and steering, OpenAI-compatible endpoints, and a resumable result store.

- ``registry``: the models known by name, ``available_models`` and ``load_model``;
- ``local``: ``LocalModel`` (generation, activations, hooks, log-probabilities);
- ``completion``: ``Completion``, generated text with its tokens' log-probabilities;
- ``remote``: ``RemoteModel``, a client for OpenAI-compatible endpoints;
- ``protocol``: ``LanguageModel``, the ``name`` and ``generate`` call both share;
- ``generations``: ``generate_texts`` and its ``Generations`` result;
- ``server``: ``make_server`` / ``serve``, an OpenAI-compatible endpoint over a model (streaming,
  log-probabilities, concurrent requests batched into shared forward passes);
- ``store``: ``ResultStore``, results that survive a crash;
- ``embeddings``: ``load_sentence_embedder``, the shipped MiniLM sentence embedder, once a process;
- ``settings``: ``check_temperature``, ``check_seed``, ``check_top_logprobs``, the generation
  settings' checks every model shares (the inspect provider names its own arguments with them).

Public names are imported from their module on first use, so ``import trustlab.llm`` stays cheap
and works without the ``llm`` extra until a model is actually needed.
"""

from __future__ import annotations

from trustlab._lazy import lazy_names

# module -> the public names it defines
__getattr__, __all__, __dir__ = lazy_names(
    __name__,
    {
        ".registry": ["available_models", "load_model", "ModelList"],
        ".local": ["LocalModel"],
        ".completion": ["Completion"],
        ".protocol": ["LanguageModel"],
        ".generations": ["generate_texts", "Generations"],
        ".embeddings": ["load_sentence_embedder", "embed_texts", "SENTENCE_EMBEDDER"],
        ".remote": ["RemoteModel"],
        ".store": ["ResultStore"],
        ".server": ["serve", "make_server"],
        ".settings": ["check_temperature", "check_seed", "check_top_logprobs"],
    },
)
