"""SayADigit: a one-turn env whose reward is 1 when the reply holds a digit. A tiny model's samples differ in
that, so a GRPO step on it has a gradient."""

from envgym.core import Env, Task, action_text
from envgym.tasks.sources import ListTaskSource


class SayADigit(Env):
    def __init__(self):
        self.tasks = ListTaskSource([Task(id="say", messages=[{"role": "user", "content": "Say a number."}])])

    def _reset(self, task, options):
        return task.prompt(), {}

    def _step(self, action):
        return [], float(any(c.isdigit() for c in action_text(action))), True, False, {}
