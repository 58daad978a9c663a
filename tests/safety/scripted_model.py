"""A stand-in language model for measure tests, imported by the test modules of this folder."""

from __future__ import annotations


class Scripted:
    """A model whose greedy completions are written down in advance (prompt -> reply); it
    records each ``generate`` call."""

    name, n_layers, hidden_size, tokenizer = "scripted", 1, 4, None

    def __init__(self, replies):
        self.replies, self.calls = replies, []

    def activations(self, *args, **kwargs):
        raise AssertionError("not used")

    intervene = activations

    def generate(self, prompts, max_new_tokens, *, chat, batch_size):
        self.calls.append((list(prompts), max_new_tokens, chat, batch_size))
        return [self.replies[p] for p in prompts]
