"""The trust record: what the last full audit found for every env and recipe, with when, on which commit and
how hard it looked.

``envgym audit --all --record FILE`` (and ``--recipes``) writes it from the audit's JSON; the committed copy,
``envgym/audit/trust_record.json``, is what ``envgym list --json`` shows per env (``"audit"``) and what eval and
train runs copy into their outputs, so a result says whether the reward it was measured with held under attack.
A target is matched by env id and reward spec: an env with its default reward, or a recipe's env with the
recipe's spec. A spec the record does not hold is ``not audited`` (audit it with ``envgym audit ID --reward
SPEC``); an env whose audit found something is ``findings``, with the counts by kind.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

RECORD_PATH = Path(__file__).resolve().parent / "trust_record.json"
PASSED, FINDINGS, SKIPPED, NOT_AUDITED = "passed", "findings", "skipped", "not audited"


def spec_key(reward: Any) -> str | None:
    """A short, stable hash of a reward spec (its validated dict form), or None for the env's own reward."""
    if reward is None:
        return None
    from envgym.rewards import RewardSpec

    canonical = json.dumps(RewardSpec.coerce(reward).to_dict(), sort_keys=True, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _commit() -> str:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, cwd=RECORD_PATH.parent
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return done.stdout.strip() or "unknown"


def entry(report: Mapping[str, Any]) -> dict[str, Any]:
    """One target's line of the record, from its ``envgym audit --json`` report."""
    target = report.get("target") or {}
    kwargs = target.get("env_kwargs") or {}
    findings: dict[str, int] = {}
    for finding in report["findings"]:
        findings[finding["kind"]] = findings.get(finding["kind"], 0) + 1
    status = SKIPPED if report["status"] == "skipped" else FINDINGS if findings else PASSED
    return {
        "env_id": target.get("env_id", report["id"]),
        "reward_spec": spec_key(kwargs.get("reward")),
        "status": status,
        "findings": findings,
        "phases": report.get("phases", []),
        "strategies": len(report["strategies"]),
        "reason": report.get("reason", ""),
    }


def write_record(result: Mapping[str, Any], path: str | Path, *, merge: bool = True) -> dict[str, Any]:
    """Write the record of an ``envgym audit --json`` result to ``path``; with ``merge``, targets already in the
    file and not audited this time keep their entries (each entry carries its own date and commit)."""
    path = Path(path)
    stamp = {
        "date": datetime.date.today().isoformat(),
        "commit": _commit(),
        "setting": dict(result["setting"]),
    }
    record = read_record(path) if merge and path.is_file() else None
    targets = dict((record or {}).get("targets", {}))
    for label, report in result["envs"].items():
        targets[label] = {**entry(report), **stamp}
    record = {
        "about": "envgym audit results per env (default reward) and per recipe; written by envgym audit --record",
        "targets": dict(sorted(targets.items())),
    }
    # One line per target: a re-audit shows in a diff as the lines of the targets whose result changed.
    lines = [f"  {json.dumps(label)}: {json.dumps(item, sort_keys=True)}" for label, item in record["targets"].items()]
    path.write_text(
        "{\n" + f' "about": {json.dumps(record["about"])},\n "targets": {{\n' + ",\n".join(lines) + "\n }\n}\n",
        encoding="utf-8",
    )
    return record


def read_record(path: str | Path = RECORD_PATH) -> dict[str, Any] | None:
    """The record at ``path`` (None when there is none)."""
    path = Path(path)
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def audit_status(env_id: str, reward: Any = None, record: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What the record says of ``env_id`` with reward spec ``reward`` (None: its own reward): ``status``
    (passed, findings, skipped, not audited), the findings by kind, and the date, commit and setting of the audit
    that said so."""
    record = record if record is not None else read_record() or {}
    key = spec_key(reward)
    matches = [
        (label, item)
        for label, item in (record.get("targets") or {}).items()
        if item["env_id"] == env_id and item["reward_spec"] == key
    ]
    if not matches:
        what = "this reward spec" if key else "this env"
        return {
            "status": NOT_AUDITED,
            "reward_spec": key,
            "hint": f"{what} is not in the trust record: envgym audit {env_id}"
            + (" --reward SPEC" if key else "")
            + " audits it",
        }
    label, item = min(matches, key=lambda pair: pair[0] != env_id)  # the env's own entry first
    fields = ("status", "findings", "date", "commit", "setting", "reward_spec", "reason")
    return {"target": label, **{name: item.get(name) for name in fields}}
