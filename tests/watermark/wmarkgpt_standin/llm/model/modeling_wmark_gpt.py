"""A tiny multimodal causal LM with the interface of the authors' model class."""

from __future__ import annotations

from pathlib import Path

import torch
from transformers import LlamaConfig, LlamaForCausalLM

from llm.constants import IMAGE_TOKEN_INDEX

N_IMAGE_TOKENS = 4


class MPLUGOwl2Config(LlamaConfig):
    model_type = "wmarkgpt_standin"


class MPLUGOwl2LlamaForCausalLM(LlamaForCausalLM):
    config_class = MPLUGOwl2Config

    def __init__(self, config):
        super().__init__(config)
        self.vision = torch.nn.Linear(3 * 2 * 2, N_IMAGE_TOKENS * config.hidden_size)
        if config.name_or_path:  # as the authors' class does: whatever is there, not strictly
            state = {}
            for file in sorted(Path(config.name_or_path).glob("pytorch_model*.bin")):
                state.update(torch.load(file, map_location="cpu", weights_only=True))
            self.load_state_dict(state, strict=False)

    def _embeds(self, input_ids, images):
        pooled = torch.nn.functional.adaptive_avg_pool2d(images, 2).flatten(1)
        image = self.vision(pooled.to(self.vision.weight.dtype)).view(
            len(images), N_IMAGE_TOKENS, -1
        )
        rows = []
        for b, ids in enumerate(input_ids):
            parts, start = [], 0
            for pos in (ids == IMAGE_TOKEN_INDEX).nonzero().flatten().tolist():
                parts.append(self.get_input_embeddings()(ids[start:pos]))
                parts.append(image[b])
                start = pos + 1
            parts.append(self.get_input_embeddings()(ids[start:]))
            rows.append(torch.cat(parts))
        return torch.stack(rows)

    def forward(self, input_ids=None, images=None, **kwargs):
        if images is not None and input_ids is not None:
            return super().forward(inputs_embeds=self._embeds(input_ids, images), **kwargs)
        return super().forward(input_ids=input_ids, **kwargs)

    def generate(self, input_ids=None, images=None, **kwargs):
        embeds = self._embeds(input_ids, images)
        mask = torch.ones(embeds.shape[:2], dtype=torch.long)
        new = super().generate(inputs_embeds=embeds, attention_mask=mask, **kwargs)
        return torch.cat([input_ids, new], dim=1)  # the prompt's ids, then the answer's
