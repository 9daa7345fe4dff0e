"""Training batches: trajectories packed into micro-batches under a token budget, and padded into the tensors
the loss needs (only the positions that predict completion tokens are kept)."""

from __future__ import annotations

import torch

from envgym.agents.trajectory import Trajectory

Row = tuple[Trajectory, list[int], list[float]]


def micro_batches(rows: list[Row], budget: int) -> list[list[Row]]:
    """Pack rows, longest first, into batches whose padded size (rows × longest) stays within ``budget``.
    A row longer than the budget gets a batch of its own."""
    ordered = sorted(rows, key=lambda row: -(len(row[0].prompt_ids) + len(row[0].completion_ids)))
    batches: list[list[Row]] = []
    for row in ordered:
        if batches and (len(batches[-1]) + 1) * _length(batches[-1][0]) <= budget:
            batches[-1].append(row)
        else:
            batches.append([row])
    return batches


def _length(row: Row) -> int:
    return len(row[0].prompt_ids) + len(row[0].completion_ids)


def pad_batch(batch: list[Row], device: torch.device) -> dict[str, torch.Tensor]:
    """Right-padded inputs, and per kept position k (from the shortest prompt's last token on) the target
    token ids[k+1], its loss mask, advantage and rollout logprob. Logits are computed only at kept positions."""
    length = max(_length(row) for row in batch)
    start = min(len(row[0].prompt_ids) for row in batch) - 1
    width = length - 1 - start
    input_ids = torch.full((len(batch), length), 0, dtype=torch.long)
    attention = torch.zeros((len(batch), length), dtype=torch.long)
    targets = torch.zeros((len(batch), width), dtype=torch.long)
    mask = torch.zeros((len(batch), width))
    advantages = torch.zeros((len(batch), width))
    rollout_logprobs = torch.zeros((len(batch), width))
    for b, (trajectory, loss_mask, token_adv) in enumerate(batch):
        ids = trajectory.prompt_ids + trajectory.completion_ids
        input_ids[b, :len(ids)] = torch.tensor(ids)
        attention[b, :len(ids)] = 1
        offset = len(trajectory.prompt_ids) - 1 - start  # kept column of the first completion token
        n = len(trajectory.completion_ids)
        targets[b, offset:offset + n] = torch.tensor(trajectory.completion_ids)
        mask[b, offset:offset + n] = torch.tensor(loss_mask, dtype=torch.float)
        advantages[b, offset:offset + n] = torch.tensor(token_adv)
        rollout_logprobs[b, offset:offset + n] = torch.tensor(trajectory.logprobs)
    keep = torch.arange(start, length - 1)
    return {"input_ids": input_ids.to(device), "attention_mask": attention.to(device), "keep": keep.to(device), "start": start,
            "targets": targets.to(device), "mask": mask.to(device), "advantages": advantages.to(device),
            "rollout_logprobs": rollout_logprobs.to(device)}
