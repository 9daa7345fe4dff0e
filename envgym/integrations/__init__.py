"""Adapters from envgym to what people already train and serve with: TRL, OpenEnv, MCP, Inspect AI.

This package sits above the core: it imports ``envgym`` (and ``envgym.agents`` lazily, inside functions),
and the core never imports it. Each adapter lives in its own module and imports its optional peer package
(``trl``, ``openenv``, ``mcp``, ``inspect_ai``) only there, so ``import envgym.integrations`` needs none of them:

- :mod:`envgym.integrations.trl`: train any envgym env with TRL's ``GRPOTrainer`` (``rollout_func`` and
  ``environment_factory``); see docs/integrations.md.
- :mod:`envgym.integrations.openenv`: the OpenEnv protocol both ways; see docs/openenv.md.
- :mod:`envgym.integrations.mcp`: MCP tool servers both ways; see docs/mcp.md.
- :mod:`envgym.integrations.inspect_ai` and :mod:`envgym.integrations.inspect_ai_log`: Inspect AI both ways (envgym
  envs as Inspect tasks, envgym eval runs as Inspect logs); see docs/integrations.md.
"""
