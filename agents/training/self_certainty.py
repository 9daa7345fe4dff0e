"""Self-certainty: a reward from the policy's own token distributions (Intuitor / RLIF).

Zhao et al. 2025, "Learning to Reason without External Rewards" (arXiv:2505.19590), score a response o to a
question q by how far the policy's next-token distributions along o are from uniform::

    Self-certainty(o | q) = (1/|o|) Σ_i KL(U || p(· | q, o_<i))
                          = (1/|o|) Σ_i [ -log V - (1/V) Σ_j log p(j | q, o_<i) ]

with V the vocabulary size and U the uniform distribution over it. It is 0 for a uniform distribution and
grows as the model concentrates its mass; unlike entropy it is mode-seeking in the sense that a few
near-impossible tokens (log p → -∞) raise it a lot. The sum runs over the tokens the policy sampled (loss mask
1), so env and tool tokens of a multi-turn episode do not count. Logits are taken at temperature 1, as the
paper does, in one scoring pass of the policy over prompt and completion (the rollout engines keep only the
sampled tokens' logprobs, not full distributions).

Repetition collapse: a confident model is most confident when it repeats itself, so self-certainty pays most for
degenerate text: ``\\boxed{0}`` repeated twelve times out-earns an honest answer (docs/rewards.md gives the
measured numbers). The spec's guard, ``max_repetition`` (default 0.5), gives a response whose :func:`repetition`
exceeds it the floor, 0 (self-certainty is a KL divergence, never below 0), and counts it as a policy failure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

from envgym.agents.trajectory import Trajectory

NGRAM = 4


def repetition(trajectory: Trajectory, n: int = NGRAM) -> float:
    """The share of the policy's token n-grams (loss mask 1, across turns) that repeat an earlier one: about 0 for
    ordinary text, near 1 for text that loops (``\\boxed{0}`` twelve times)."""
    ids = [token for token, mask in zip(trajectory.completion_ids, trajectory.loss_mask) if mask]
    grams = [tuple(ids[i : i + n]) for i in range(len(ids) - n + 1)]
    return 1.0 - len(set(grams)) / len(grams) if grams else 0.0


def token_self_certainty(logits: torch.Tensor) -> torch.Tensor:
    """KL(U || softmax(logits)) over the last dimension: -log V - mean_j log p_j."""
    logp = torch.log_softmax(logits.float(), dim=-1)
    return -math.log(logits.shape[-1]) - logp.mean(dim=-1)


def sequence_self_certainty(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean of :func:`token_self_certainty` over the positions where ``mask`` is 1; ``logits`` (B, T, V), ``mask``
    (B, T) -> (B,). A sequence without a masked position gets 0."""
    mask = mask.to(torch.float32)
    per_token = token_self_certainty(logits) * mask
    return per_token.sum(-1) / mask.sum(-1).clamp(min=1.0)


@torch.no_grad()
def trajectory_self_certainty(
    model: Any, trajectories: Sequence[Trajectory], device: torch.device | str, batch_size: int = 8
) -> list[float]:
    """Self-certainty of each trajectory under ``model``: one forward over prompt + completion per episode (in
    batches, right-padded), the distribution predicting each policy token scored."""
    was_training = model.training
    model.eval()
    values: list[float] = []
    try:
        for first in range(0, len(trajectories), batch_size):
            batch = trajectories[first : first + batch_size]
            rows = [t.prompt_ids + t.completion_ids for t in batch]
            width = max(len(row) for row in rows)
            ids = torch.zeros((len(rows), width), dtype=torch.long)
            attention = torch.zeros((len(rows), width), dtype=torch.long)
            # Position p predicts token p + 1: the policy token at completion index j is predicted at
            # len(prompt) + j - 1.
            mask = torch.zeros((len(rows), width), dtype=torch.long)
            for b, (trajectory, row) in enumerate(zip(batch, rows)):
                ids[b, : len(row)] = torch.tensor(row)
                attention[b, : len(row)] = 1
                start = len(trajectory.prompt_ids) - 1
                mask[b, start : start + len(trajectory.loss_mask)] = torch.tensor(trajectory.loss_mask)
            logits = model(input_ids=ids.to(device), attention_mask=attention.to(device)).logits
            values.extend(float(v) for v in sequence_self_certainty(logits, mask.to(logits.device)))
    finally:
        model.train(was_training)
    return values
