"""``envgym audit``: a battery of generic adversarial actions that every env must withstand.

Light like the rest of the core: no torch, no particular env, no sandbox. See docs/audit.md.
"""

from envgym.audit.runner import AuditSettings, EnvAudit, audit_env
from envgym.audit.strategies import Strategy, build_strategies
from envgym.audit.suite import audit_envs, summary
from envgym.audit.verdicts import KINDS, Finding

__all__ = [
    "KINDS",
    "AuditSettings",
    "EnvAudit",
    "Finding",
    "Strategy",
    "audit_env",
    "audit_envs",
    "build_strategies",
    "summary",
]
