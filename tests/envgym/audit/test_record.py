"""The trust record: written from `envgym audit --json`, matched by env and reward spec, shown by `envgym list`."""

import json

from typer.testing import CliRunner

import envgym
from envgym.audit.record import RECORD_PATH, audit_status, read_record, spec_key, write_record
from envgym.audit.target import recipe_targets
from envgym.cli.app import app

VOTE = {"components": [{"name": "vote", "source": "majority_vote"}]}


def report(label, env_id, findings=(), reward=None, status="audited"):
    return {
        "id": label,
        "status": status,
        "reason": "",
        "target": {"env_id": env_id, "env_kwargs": {"reward": reward} if reward else {}},
        "strategies": ["a", "b"],
        "phases": ["battery"],
        "findings": [{"kind": kind} for kind in findings],
    }


def result(*reports):
    return {"setting": {"tasks": 2, "thorough": False}, "envs": {r["id"]: r for r in reports}}


def test_a_record_says_passed_findings_or_not_audited_per_env_and_spec(tmp_path):
    path = tmp_path / "record.json"
    write_record(
        result(
            report("math/Arithmetic-v0", "math/Arithmetic-v0"),
            report("games/X-v0", "games/X-v0", ["earns_reward", "earns_reward"]),
            report("recipe:ttrl", "math/Arithmetic-v0", ["earns_reward"], reward=VOTE),
        ),
        path,
    )
    record = read_record(path)
    assert audit_status("math/Arithmetic-v0", record=record)["status"] == "passed"
    assert audit_status("games/X-v0", record=record)["findings"] == {"earns_reward": 2}
    voted = audit_status("math/Arithmetic-v0", VOTE, record=record)
    assert (voted["status"], voted["target"]) == ("findings", "recipe:ttrl")
    other = audit_status("math/Arithmetic-v0", {"components": [{"name": "c", "source": "env"}]}, record=record)
    assert other["status"] == "not audited" and "--reward SPEC" in other["hint"]
    assert set(record["targets"]["games/X-v0"]) >= {"date", "commit", "setting"}


def test_a_new_record_keeps_the_entries_it_did_not_audit_again(tmp_path):
    path = tmp_path / "record.json"
    write_record(result(report("a/A-v0", "a/A-v0")), path)
    write_record(result(report("b/B-v0", "b/B-v0", ["crash"])), path)
    assert set(read_record(path)["targets"]) == {"a/A-v0", "b/B-v0"}


def test_a_spec_is_matched_by_content_not_by_how_it_was_written():
    assert spec_key(VOTE) == spec_key({"components": [{"source": "majority_vote", "name": "vote", "weight": 1}]})
    assert spec_key(None) is None


def test_list_json_shows_each_envs_audit_status():
    listed = json.loads(CliRunner().invoke(app, ["list", "--json"]).stdout)
    assert all(entry["audit"]["status"] in ("passed", "findings", "skipped", "not audited") for entry in listed)


def test_the_committed_record_covers_every_registered_env_and_every_recipe():
    record = read_record(RECORD_PATH)
    assert record is not None, f"{RECORD_PATH} is missing: envgym audit --all --recipes --record {RECORD_PATH}"
    missing = [spec.id for spec in envgym.list_envs() if not spec.unsafe and spec.id not in record["targets"]]
    missing += [t.label for t in recipe_targets() if t.label not in record["targets"]]
    assert not missing, f"not in the trust record (re-run envgym audit --all --recipes --record): {missing}"
