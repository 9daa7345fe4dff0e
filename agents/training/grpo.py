"""GRPO: the clipped policy loss (its config is :mod:`envgym.agents.training.config`, the advantages
:mod:`envgym.agents.training.advantages`).

Objective (per optimizer step, over a batch of groups; G episodes of one task form a group)::

    L(θ) = agg_{i,t} [ -min(ρ_t A_{i,t}, clip(ρ_t, 1-ε, 1+ε_high) A_{i,t}) · w_t  +  β · KL3_t ]   over policy tokens
    ρ_t  = π_θ(y_t | ·) / π_old(y_t | ·)
    KL3  = exp(q) - q - 1,  q = log π_ref(y_t) - log π_θ(y_t)                        (Schulman's k3 estimator)
    w_t  = min(π_old(y_t) / π_rollout(y_t), cap)   only with importance-sampling correction, else 1

``A_{i,t}`` is the advantage of the *turn* that token t belongs to (:mod:`envgym.agents.training.advantages`),
so multi-turn episodes get per-turn credit; with process rewards in the reward spec, each token of step k of a
response also gets that step's advantage (PURE's min-form credit or a sum). Tokens the
env or chat template wrote (loss mask 0) never count.
Optional entropy control changes the per-token term: an entropy bonus -c·H_t, Clip-Cov (drop a random few
high-covariance tokens from the loss) or KL-Cov (no clip; |log ρ_t| penalty on the top-covariance tokens); the
formulas are in :mod:`envgym.agents.training.entropy_control`.

Simplifications, stated: π_old is the model at the start of the step (its logprobs are taken from the first
pass over the batch, detached, so on-policy training needs one forward per token, like TRL with
``num_iterations=1``); there is no value function; the reference model for β > 0 is the initial policy.
"""

from __future__ import annotations

import torch

from envgym.agents.training.config import GRPOConfig
from envgym.agents.training.entropy_control import clip_cov_selection, kl_cov_selection, token_covariance


def dr_grpo_constant(config: GRPOConfig, max_turns: int | None, turns_seen: int) -> int:
    """C of ``loss_type="constant"``: ``loss_constant`` when set, else the episode's generation budget,
    ``max_completion_length × max_turns``. Dr. GRPO (Liu et al. 2025, arXiv:2503.20783) divides by the most
    tokens a sequence can hold; a multi-turn episode holds every turn's allowance, not one turn's. Without a
    turn limit (``max_turns`` None) the budget is known only while no episode has more than one turn."""
    if config.loss_constant:
        return config.loss_constant
    if max_turns is None:
        if turns_seen > 1:
            raise ValueError(
                "loss_type='constant' divides by the episode's generation budget, max_completion_length "
                "x the turn limit, and this env's episodes have several turns but no known limit: give the env "
                "one (env_kwargs: {max_turns: N}) or set loss_constant"
            )
        max_turns = 1
    return config.max_completion_length * max_turns


# ----------------------------------------------------------------------------------------------------
# Loss
# ----------------------------------------------------------------------------------------------------


def token_logprobs(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """log softmax(logits)[target] per position, without materializing the full log-softmax."""
    logits = logits.float()
    return logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1) - torch.logsumexp(logits, dim=-1)


def policy_loss(
    logprobs: torch.Tensor,
    old_logprobs: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    config: GRPOConfig,
    *,
    num_sequences: int,
    num_tokens: int,
    ref_logprobs: torch.Tensor | None = None,
    rollout_logprobs: torch.Tensor | None = None,
    loss_constant: int | None = None,
    entropy: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """The clipped surrogate of the module docstring for one micro-batch of shape (B, T).

    ``num_sequences`` and ``num_tokens`` are counts over the *whole* optimizer batch (sequences with at least
    one policy token, and policy tokens), so the micro-batch losses add up to the batch loss and gradient
    accumulation is exact. Aggregations over token losses ℓ_{i,t} with mask m_{i,t}:

    - ``token_mean``:          Σ_{i,t} m ℓ / Σ_{i,t} m
    - ``seq_mean_token_mean``: (1/N) Σ_i (Σ_t m ℓ / Σ_t m)
    - ``constant``:            Σ_{i,t} m ℓ / (N · C), C = ``loss_constant`` (from :func:`dr_grpo_constant`;
                               None: the one-turn budget ``dr_grpo_constant(config, 1, 1)``)

    ``entropy_control`` changes ℓ as :mod:`envgym.agents.training.entropy_control` describes (``cov_selected`` counts
    the tokens it picked), and ``entropy`` (B, T), the per-token entropy with gradient, is needed for ``entropy_coef``.

    Returns the loss and sums (not means) of the statistics, for the trainer to normalize over the batch.
    """
    mask = mask.to(logprobs.dtype)
    log_ratio = logprobs - old_logprobs
    ratio = torch.exp(log_ratio)
    low, high = 1.0 - config.epsilon, 1.0 + (config.epsilon if config.epsilon_high is None else config.epsilon_high)
    unclipped = ratio * advantages
    clipped = torch.clamp(ratio, low, high) * advantages
    per_token = -torch.min(unclipped, clipped)
    selected = None
    if config.entropy_control != "none":
        covariance = token_covariance(logprobs, advantages, mask)
        if config.entropy_control == "clip_cov":
            selected = clip_cov_selection(
                covariance,
                mask,
                config.clip_cov_ratio,
                config.clip_cov_lb,
                config.clip_cov_ub,
                already_clipped=clipped < unclipped,
            )
            per_token = per_token * (~selected).to(per_token.dtype)  # no loss, so no gradient, from these tokens
        else:  # kl_cov: no ratio clipping; the top tokens by covariance are held near π_old instead
            selected = kl_cov_selection(covariance, mask, config.kl_cov_ratio)
            per_token = -unclipped + config.kl_cov_coef * selected.to(per_token.dtype) * log_ratio.abs()
    if config.importance_sampling_correction:
        if rollout_logprobs is None:
            raise ValueError("importance_sampling_correction needs the rollout engine's logprobs")
        weight = torch.exp(old_logprobs - rollout_logprobs).clamp(max=config.importance_sampling_cap)
        per_token = per_token * weight.detach()
    kl = None
    if config.beta > 0:
        if ref_logprobs is None:
            raise ValueError("beta > 0 needs reference logprobs")
        q = ref_logprobs - logprobs
        kl = torch.exp(q) - q - 1.0
        per_token = per_token + config.beta * kl
    if config.entropy_coef > 0:
        if entropy is None:
            raise ValueError("entropy_coef > 0 needs the per-token entropies")
        per_token = per_token - config.entropy_coef * entropy

    if config.loss_type == "token_mean":
        loss = (per_token * mask).sum() / max(num_tokens, 1)
    elif config.loss_type == "seq_mean_token_mean":
        loss = ((per_token * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)).sum() / max(num_sequences, 1)
    else:
        constant = loss_constant or dr_grpo_constant(config, 1, 1)
        loss = (per_token * mask).sum() / (max(num_sequences, 1) * constant)

    with torch.no_grad():
        stats = {
            "clip_low": (((ratio < low) & (advantages < 0)).to(mask.dtype) * mask).sum(),
            "clip_high": (((ratio > high) & (advantages > 0)).to(mask.dtype) * mask).sum(),
            "kl": (kl.detach() * mask).sum() if kl is not None else torch.zeros(()),
            "ratio": (ratio.detach() * mask).sum(),
        }
        if selected is not None:
            stats["cov_selected"] = (selected.to(mask.dtype) * mask).sum()
    return loss, stats
