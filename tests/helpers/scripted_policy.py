"""A token-level policy that plays given turns: for tests that need to know exactly what the agent says.

It tokenizes each scripted turn with a real tokenizer and appends the end-of-turn token, so everything
downstream (chat templates, masks, decoding) runs for real; only the choice of words is fixed. Each
"sampled" token gets the logprob -0.5, so tests can tell policy tokens from env tokens.
"""

from __future__ import annotations

from typing import Any

from envgym.agents.engines.policy import Generation, SamplingParams, encode

SCRIPTED_LOGPROB = -0.5


class ScriptedPolicy:
    """Plays scripted turns, one per call, for each conversation.

    Conversations are told apart by their prompt tokens, so the policy works for any batch order:
    ``scripts`` maps a prompt substring (e.g. the task text) to that episode's turns."""

    def __init__(self, tokenizer: Any, scripts: dict[str, list[str]], name: str = "scripted"):
        self.tokenizer, self.scripts, self.name = tokenizer, scripts, name
        self.eos_ids = [tokenizer.eos_token_id]
        self.calls: list[int] = []  # batch sizes, to check the loop batches only active episodes

    def generate(self, prompts: list[list[int]], params: SamplingParams) -> list[Generation]:
        self.calls.append(len(prompts))
        out = []
        for ids in prompts:
            text = self.tokenizer.decode(ids)
            key = next(k for k in self.scripts if k in text)
            turn = text.count("<|im_start|>assistant") - 1
            tokens = encode(self.tokenizer, self.scripts[key][turn]) + self.eos_ids
            reason = "stop" if len(tokens) <= params.max_completion_length else "length"
            tokens = tokens[: params.max_completion_length]
            out.append(Generation(self.tokenizer.decode(tokens), tokens, [SCRIPTED_LOGPROB] * len(tokens), reason))
        return out

    def turn_text(self, token_ids: list[int]) -> str:
        return self.tokenizer.decode(token_ids[:-1] if token_ids[-1:] == self.eos_ids else token_ids)
