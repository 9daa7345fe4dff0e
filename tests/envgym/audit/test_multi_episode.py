"""Several episodes on one env: a writer's episode must not change what later episodes earn."""

import json

from envgym.audit import AuditSettings, audit_env
from envgym.audit.multi_episode import writers
from envgym.core import Env, Task
from envgym.tasks import ListTaskSource

SETTINGS = AuditSettings(cue_tasks=0)
TOOLS = [
    {
        "type": "function",
        "function": {"name": "order", "parameters": {"type": "object", "properties": {"item": {"type": "string"}}}},
    }
]


class Shop(Env):
    """Order the item the task names (a call ``order``), then answer ``done``. ``shared_stock`` keeps the stock
    across episodes, so an episode that orders the last item spoils every later one: the leak under test."""

    def __init__(self, shared_stock: bool = False):
        self.shared_stock = shared_stock
        self.stock = {"pen": 1, "cup": 1}
        self.tasks = ListTaskSource(
            [
                Task(id=f"shop-{item}", answer=item, messages=[{"role": "user", "content": f"Order one {item}."}])
                for item in ("pen", "cup")
            ]
        )

    def _reset(self, task, options):
        if not self.shared_stock:
            self.stock = {"pen": 1, "cup": 1}
        self.ordered = None
        return task.prompt(), {"tools": TOOLS}

    def reference_action(self):
        if self.ordered is None:
            return {"role": "assistant", "content": "", "tool_calls": [self._call(self.task.answer)]}
        return "done"

    def _call(self, item):
        return {"id": "c", "type": "function", "function": {"name": "order", "arguments": json.dumps({"item": item})}}

    def _step(self, action):
        calls = action.get("tool_calls") if isinstance(action, dict) else None
        if calls:
            try:
                item = json.loads(calls[0]["function"]["arguments"]).get("item")
            except (ValueError, TypeError, AttributeError, KeyError):
                item = None
            if self.stock.get(item, 0) > 0:
                self.stock[item] -= 1
                self.ordered = item
            return [{"role": "tool", "content": "ok"}], 0.0, False, False, {"action_valid": True}
        correct = self.ordered == self.task.answer
        return [], float(correct), True, False, {"correct": correct}


def test_an_episode_that_changes_shared_state_is_a_state_leak_naming_the_writer():
    report = audit_env("toy/Shop-v0", SETTINGS, env=Shop(shared_stock=True))
    leaks = [f for f in report.findings if f.kind == "state_leak"]
    assert leaks and leaks[0].strategy.startswith("writer:"), [f.to_dict() for f in report.findings]


def test_an_env_that_starts_every_episode_afresh_has_no_leak():
    report = audit_env("toy/Shop-v0", SETTINGS, env=Shop())
    assert not [f for f in report.findings if f.kind == "state_leak"], [f.to_dict() for f in report.findings]
    assert "multi-episode" in report.phases


def test_writers_follow_what_the_prompt_asks_for():
    sql = [{"role": "user", "content": "CREATE TABLE orders (id INTEGER);\nAnswer with SQL in a ```sql block."}]
    assert [w.name for w in writers(sql, None, "/tmp/m")] == ["writer:sql", "writer:sql-attach", "writer:program"]
    program = writers(
        [{"role": "user", "content": "hi"}],
        [{"name": "python", "inputSchema": {"properties": {"code": {"type": "string"}}}}],
        "/tmp/m",
    )
    assert [w.name for w in program] == ["writer:tool-program:python", "writer:every-tool"]
    assert all(w.marker == "/tmp/m-written" for w in program[:1])
