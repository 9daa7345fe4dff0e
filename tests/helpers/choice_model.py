"""ChoiceLlama: the tiny test Llama, made to pick each assistant turn among given texts.

A random tiny model never writes a well-formed tool call, so a test of a multi-turn tool loop (envgym's or
TRL's) would never reach its second turn. ChoiceLlama keeps the real model and its real sampling but masks the
logits while generating, so that assistant turn k (counted by the assistant headers in the sequence) is one of
the texts given for turn k, followed by the end-of-turn token. Between several texts the model's own
probabilities choose, so rewards differ inside a GRPO group and a training step has a signal. Forward passes
for the loss are the plain Llama's.

    >>> model = choice_model(tokenizer, [["<tool_call>...</tool_call>"], ["<answer>5</answer>", "<answer>8</answer>"]])
"""

from __future__ import annotations

import pathlib
from typing import Any

import torch
from transformers import AutoTokenizer, LlamaForCausalLM, LogitsProcessor, LogitsProcessorList

from helpers.tiny_models import tiny_model_path

ASSISTANT_HEADER = "<|im_start|>assistant\n"


def tool_tokenizer() -> Any:
    """The tiny tokenizer with TRL's bundled Qwen2.5 chat template (TRL parses tool calls for that template)."""
    import trl

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_path())
    tokenizer.chat_template = (pathlib.Path(trl.__file__).parent / "chat_templates" / "qwen2_5.jinja").read_text()
    return tokenizer


class TurnChoices(LogitsProcessor):
    """Leaves only the tokens that continue one of this turn's texts (``-inf`` elsewhere)."""

    def __init__(self, header: list[int], turns: list[list[list[int]]], eos_id: int):
        self.header, self.turns, self.eos_id = header, turns, eos_id

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        mask = torch.full_like(scores, float("-inf"))
        width = len(self.header)
        for row, ids in enumerate(input_ids.tolist()):
            starts = [i for i in range(len(ids) - width + 1) if ids[i : i + width] == self.header]
            generated = ids[starts[-1] + width :]
            options = self.turns[min(len(starts) - 1, len(self.turns) - 1)]
            allowed = {
                text[len(generated)]
                for text in options
                if len(text) > len(generated) and text[: len(generated)] == generated
            }
            mask[row, sorted(allowed or {self.eos_id})] = 0.0
        return scores + mask


class ChoiceLlama(LlamaForCausalLM):
    """A LlamaForCausalLM whose ``generate`` adds :class:`TurnChoices` (set ``turn_choices`` after loading)."""

    turn_choices: TurnChoices

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        processors = LogitsProcessorList(kwargs.pop("logits_processor", None) or [])
        processors.append(self.turn_choices)
        return super().generate(*args, logits_processor=processors, **kwargs)


def choice_model(tokenizer: Any, turns: list[list[str]]) -> ChoiceLlama:
    """The tiny model (fresh weights from disk), choosing turn k among ``turns[k]`` (the last list repeats)."""

    def encode(text: str) -> list[int]:
        return tokenizer(text, add_special_tokens=False)["input_ids"]

    model = ChoiceLlama.from_pretrained(tiny_model_path())
    eos = tokenizer.eos_token_id
    choices = [[encode(text) + [eos] for text in texts] for texts in turns]
    model.turn_choices = TurnChoices(encode(ASSISTANT_HEADER), choices, eos)
    return model
