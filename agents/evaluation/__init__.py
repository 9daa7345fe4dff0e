"""Evaluation: `envgym eval`'s runner (resumable samples), metrics such as pass@k, and the HTML/JSON reports and
run comparisons.

Evaluation reaches episodes through :mod:`envgym.agents.rollout` and models through :mod:`envgym.agents.engines`;
it never imports training (training logs eval samples through it, lazily).
"""
