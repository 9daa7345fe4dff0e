"""Entropy control for the policy loss: an entropy bonus, and Clip-Cov / KL-Cov (Cui et al. 2025, "The Entropy
Mechanism of Reinforcement Learning for Reasoning Language Models", arXiv:2505.22617).

The paper finds that policy entropy falls as the covariance between a token's log-probability and its advantage
is positive: confident tokens with high advantage are pushed further up. A few tokens with very high covariance
drive the collapse, so both methods act on those tokens only. With ``m`` the loss mask (policy tokens) and means
taken over the masked tokens of the micro-batch (as verl computes them)::

    Cov_t = (log π_θ(y_t) - mean_s log π_θ(y_s)) · (A_t - mean_s A_s)                     (detached)

- **Clip-Cov**: among tokens whose clip is not already active, those with ω_low < Cov_t < ω_high; a random
  ``max(⌊r·N⌋, 1)`` of them (N: masked tokens, r: ``clip_cov_ratio``) are removed from the loss (gradient detached).
- **KL-Cov**: no ratio clipping; the ``max(⌊k·N⌋, 1)`` tokens of highest Cov_t (k: ``kl_cov_ratio``) get a KL
  penalty β·|log π_θ(y_t) - log π_old(y_t)| (β: ``kl_cov_coef``)::

      ℓ_t = -ρ_t A_t + 1[t ∈ top-k by Cov] · β · |log ρ_t|

- **Entropy bonus**: ℓ_t -= c · H_t with H_t = -Σ_v π_θ(v | ·) log π_θ(v | ·) (c: ``entropy_coef``).

Defaults follow the paper: r = k = 2e-4, ω_low = 1, ω_high = 5, β = 1.
"""

from __future__ import annotations

import torch


def token_covariance(logprobs: torch.Tensor, advantages: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Cov_t of the module docstring for each token (B, T), detached; 0 outside the mask."""
    mask = mask.to(torch.bool)
    logprobs, advantages = logprobs.detach().float(), advantages.detach().float()
    count = mask.sum().clamp(min=1)
    mean_logprob = logprobs[mask].sum() / count
    mean_advantage = advantages[mask].sum() / count
    return torch.where(mask, (logprobs - mean_logprob) * (advantages - mean_advantage), torch.zeros_like(logprobs))


def clip_cov_selection(
    covariance: torch.Tensor,
    mask: torch.Tensor,
    ratio: float,
    low: float,
    high: float,
    already_clipped: torch.Tensor | None = None,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Clip-Cov's tokens (a bool tensor like ``covariance``): ``max(⌊ratio·N⌋, 1)`` drawn at random among the
    masked tokens with ``low < Cov < high`` whose ratio clip is not already active."""
    mask = mask.to(torch.bool)
    band = mask & (covariance > low) & (covariance < high)
    if already_clipped is not None:
        band &= ~already_clipped
    candidates = band.flatten().nonzero(as_tuple=True)[0]
    budget = max(int(ratio * int(mask.sum())), 1)
    order = torch.randperm(len(candidates), generator=generator, device="cpu").to(candidates.device)
    chosen = candidates[order[:budget]]
    selected = torch.zeros(covariance.numel(), dtype=torch.bool, device=covariance.device)
    selected[chosen] = True
    return selected.view_as(covariance)


def kl_cov_selection(covariance: torch.Tensor, mask: torch.Tensor, ratio: float) -> torch.Tensor:
    """KL-Cov's tokens (a bool tensor like ``covariance``): the ``max(⌊ratio·N⌋, 1)`` masked tokens of highest
    covariance (none when nothing is masked)."""
    mask = mask.to(torch.bool)
    count = int(mask.sum())
    selected = torch.zeros(covariance.numel(), dtype=torch.bool, device=covariance.device)
    if count == 0:
        return selected.view_as(covariance)
    flat_mask = mask.flatten()
    positions = flat_mask.nonzero(as_tuple=True)[0]
    top = torch.topk(covariance.flatten()[flat_mask], max(int(ratio * count), 1), largest=True).indices
    selected[positions[top]] = True
    return selected.view_as(covariance)


def token_entropies(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """H_t for each policy token, with gradient: ``logits`` (N, V) are the rows of the mask's positions in
    ``mask.nonzero()`` order (as the trainer computes them); the result is (B, T), 0 outside the mask."""
    logp = torch.log_softmax(logits.float(), dim=-1)
    entropy = -(logp.exp() * logp).sum(-1)
    rows, cols = mask.nonzero(as_tuple=True)
    out = torch.zeros(mask.shape, dtype=entropy.dtype, device=entropy.device)
    return out.index_put((rows, cols), entropy)
