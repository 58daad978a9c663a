"""Tokenising a prompt with image placeholders, and stopping at a keyword."""

from __future__ import annotations

import torch
from transformers import StoppingCriteria

from llm.constants import DEFAULT_IMAGE_TOKEN


def tokenizer_image_token(prompt, tokenizer, image_token_index, return_tensors=None):
    ids = []
    for i, chunk in enumerate(prompt.split(DEFAULT_IMAGE_TOKEN)):
        if i > 0:
            ids.append(image_token_index)
        if chunk:
            ids.extend(tokenizer(chunk, add_special_tokens=(i == 0))["input_ids"])
    return torch.tensor(ids, dtype=torch.long) if return_tensors == "pt" else ids


class KeywordsStoppingCriteria(StoppingCriteria):
    def __init__(self, keywords, tokenizer, input_ids):
        self.keywords = list(keywords)
        self.tokenizer = tokenizer
        self.start = input_ids.shape[1]

    def __call__(self, input_ids, scores, **kwargs):
        text = self.tokenizer.decode(input_ids[0, self.start :])
        return any(text.endswith(k) for k in self.keywords)
