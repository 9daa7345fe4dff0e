"""Every installed recipe (envgym/recipes/) passes the fast audit through its own reward spec: its judges against the
obedient judge, its group and process rewards through the trainer's scoring (a tiny model's tokenizer), two seats
where it has them. `envgym audit --recipes --thorough` is the benchmark, not part of `make test`."""

from helpers.tiny_models import tiny_model_path

from envgym.audit import AuditSettings, audit_envs
from envgym.audit.target import recipe_targets


def test_every_recipe_passes_the_fast_audit():
    reports = audit_envs(recipe_targets(), AuditSettings(model=str(tiny_model_path())), workers=2)
    skipped = {r.env_id: r.reason for r in reports if r.status != "audited"}
    assert not skipped, skipped
    findings = [finding for report in reports for finding in report.findings]
    assert not findings, f"{len(findings)} findings in {len({f.env_id for f in findings})} recipes:\n" + "\n".join(
        f"{f.env_id} {f.kind} {f.strategy} tasks={f.tasks}: {f.evidence[:300]}" for f in findings
    )
