"""Every registered env, built-in or plugin, passes the fast audit with its default reward: no adversarial action
earns more than an honest wrong answer, crashes, runs code, takes over 2.5 s a step, leaks state (within an episode
or across several), fails in a way the policy caused, pays two colluding seats, or leaks its answer through a
surface cue (the blind learner), and no honest answer is refused.

Envs registered ``unsafe=True`` are fenced off by design (docs/audit.md) and are not required to pass. The
thorough setting (`envgym audit --all --thorough`) is the benchmark, not part of `make test`.
"""

import envgym
from envgym.audit import AuditSettings, audit_envs

# Envs that play a remote server cannot be built without one (tests/envgym/integrations/test_openenv.py).
NEEDS_A_SERVER = {"openenv/Remote-v0"}


def test_every_registered_env_passes_the_fast_audit():
    ids = [spec.id for spec in envgym.list_envs() if spec.id not in NEEDS_A_SERVER and not spec.unsafe]
    reports = audit_envs(ids, AuditSettings(), workers=2)
    assert all(report.status == "audited" for report in reports), [r.env_id for r in reports if r.status != "audited"]
    findings = [finding for report in reports for finding in report.findings]
    assert not findings, f"{len(findings)} findings in {len({f.env_id for f in findings})} envs:\n" + "\n".join(
        f"{f.env_id} {f.kind} {f.strategy} tasks={f.tasks}: {f.evidence[:300]}" for f in findings
    )
