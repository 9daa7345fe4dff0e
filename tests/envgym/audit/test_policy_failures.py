"""Failures a policy can cause (stalling to the turn limit, a query that runs past the time limit) are findings when
the episode is dropped or the step runs long, instead of being scored. Issue 29's hole (one quadratic SQLite
expression ran past sql/TextToSQL-v0's 1 s limit) is played and must stay closed."""

from envgym.audit import AuditSettings, audit_env
from envgym.audit.strategies import SLOW_SQL, build_strategies
from envgym.core import Env, Task, action_text
from envgym.tasks import ListTaskSource

SETTINGS = AuditSettings(cue_tasks=0)


class GivesUpOnStalls(Env):
    """Answer in <answer></answer> within 3 turns; a reply without an answer continues the episode, and running out
    of turns is reported as an error (the trainer drops the episode) instead of a scored failure."""

    def __init__(self):
        self.tasks = ListTaskSource([Task("t", [{"role": "user", "content": "Say 7 as <answer>N</answer>."}], "7")])

    def _reset(self, task, options):
        self.turns = 0
        return task.prompt(), {}

    def reference_action(self):
        return "<answer>7</answer>"

    def wrong_action(self):
        return "<answer>8</answer>"

    def _step(self, action):
        self.turns += 1
        text = action_text(action)
        if "<answer>" in text:
            correct = text.strip() == "<answer>7</answer>"
            return [], float(correct), True, False, {"correct": correct}
        if self.turns >= 3:
            return [], 0.0, False, True, {"error": "no answer before the turn limit"}
        return [{"role": "user", "content": "Go on."}], 0.0, False, False, {}


def test_stalling_to_the_turn_limit_that_drops_the_episode_is_a_policy_failure():
    report = audit_env("toy/Stall-v0", SETTINGS, env=GivesUpOnStalls())
    assert "stall" in {f.strategy for f in report.findings if f.kind == "policy_failure"}


def test_queries_that_time_out_are_played_where_the_prompt_asks_for_sql():
    sql = [{"role": "user", "content": "Answer with one SQLite SELECT query in a ```sql code block."}]
    names = {s.name for s in build_strategies(sql, marker_prefix="/tmp/m")}
    assert {f"slow:sql-{name}" for name in SLOW_SQL} <= names
    assert not any(n.startswith("slow:sql") for n in (s.name for s in build_strategies([], marker_prefix="/tmp/m")))


def test_a_quadratic_sqlite_expression_is_stopped_within_the_time_limit():
    report = audit_env("sql/TextToSQL-v0", AuditSettings(tasks=1, cue_tasks=0))
    assert "slow:sql-quadratic" in report.strategies
    assert "slow:sql-quadratic" not in {f.strategy for f in report.findings if f.kind == "slow_step"}
