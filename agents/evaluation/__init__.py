"""Evaluation: `envgym eval`'s runner (resumable samples), metrics such as pass@k, the HTML/JSON reports and run
comparisons, and `envgym demo`.

Evaluation reaches episodes through :mod:`envgym.agents.rollout` and models through :mod:`envgym.agents.engines`.
"""
