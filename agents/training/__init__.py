"""Training: GRPO (losses, advantages, entropy control), the trainer loop around it, batching, the group and
model-based rewards that need the whole group or torch, env mixtures and curricula, tracking, and `envgym train`.

Training reaches episodes through :mod:`envgym.agents.rollout` and models through :mod:`envgym.agents.engines`.
"""
