"""Stand-ins for a LocalModel's tokenizer and config in the inspect provider's tests: one token
a word, a context of ``n`` tokens."""

from types import SimpleNamespace


class WordTokenizer:
    """A chat template that joins the messages' contents; one token a word."""

    def apply_chat_template(self, conversation, add_generation_prompt, tokenize):
        return " ".join(m["content"] for m in conversation)

    def __call__(self, text, add_special_tokens=True):
        return {"input_ids": list(range(len(text.split())))}


def context_of(n: int) -> SimpleNamespace:
    """A model object whose text config gives a context of ``n`` tokens."""
    text_config = SimpleNamespace(max_position_embeddings=n)
    return SimpleNamespace(config=SimpleNamespace(get_text_config=lambda: text_config))
