"""The rollout loop ends an episode on a failure that is not the policy's fault and says so in
``Episode.error`` (never as a reward): env exceptions at reset or step, and failed model requests."""

import pytest

AutoTokenizer = pytest.importorskip("transformers").AutoTokenizer

from helpers.scripted_policy import ScriptedPolicy
from helpers.tiny_models import tiny_model_path

from envgym.agents.engines.policy import Generation, SamplingParams
from envgym.agents.rollout import rollout
from envgym.core import Env, Task
from envgym.tasks import ListTaskSource
from envgym.vector import VectorEnv

TASKS = [
    Task("calm", [{"role": "user", "content": "Count calmly."}]),
    Task("crash-step", [{"role": "user", "content": "Count until the crash."}]),
    Task("crash-reset", [{"role": "user", "content": "Never starts."}]),
]
SCRIPTS = {"calmly": ["one", "two", "three"], "the crash": ["one", "two", "three"], "starts": ["one"]}


class Counting(Env):
    """Three turns, reward 1 each; task "crash-step" raises on the second step, "crash-reset" on reset."""

    def __init__(self):
        self.tasks = ListTaskSource(TASKS)

    def _reset(self, task, options):
        if task.id == "crash-reset":
            raise RuntimeError("the task server is down")
        self.turn = 0
        return task.prompt(), {}

    def _step(self, action):
        self.turn += 1
        if self.task.id == "crash-step" and self.turn == 2:
            raise RuntimeError("verifier crashed")
        return [{"role": "user", "content": "Next."}], 1.0, self.turn >= 3, False, {}


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(tiny_model_path())


def play(policy, task_indices):
    envs = VectorEnv([Counting] * len(task_indices), env_ids=["test/Counting"] * len(task_indices))
    return rollout(policy, envs, task_indices=task_indices, sampling=SamplingParams(max_completion_length=16))


def test_an_env_exception_at_a_step_ends_that_episode_as_failed(tokenizer):
    calm, crashed = play(ScriptedPolicy(tokenizer, SCRIPTS), [0, 1]).trajectories
    assert crashed.failed and crashed.error == "RuntimeError: verifier crashed"
    assert crashed.episode.num_turns == 2  # the turn that crashed is kept for inspection, and nothing after it
    assert not calm.failed and calm.error is None and calm.episode.num_turns == 3 and calm.total_reward == 3.0
    assert "error" not in calm.episode.metadata and "error" not in crashed.episode.metadata


def test_an_env_exception_at_reset_fails_the_episode_before_any_turn(tokenizer):
    policy = ScriptedPolicy(tokenizer, SCRIPTS)
    calm, never = play(policy, [0, 2]).episodes
    assert never.failed and "the task server is down" in never.error and never.num_turns == 0
    assert not calm.failed and policy.calls == [1, 1, 1]  # the failed env is never generated for


class FailingRequests(ScriptedPolicy):
    """A server that refuses every request of conversations containing ``refused``."""

    def __init__(self, tokenizer, scripts, refused):
        super().__init__(tokenizer, scripts)
        self.refused = refused

    def generate(self, prompts, params):
        generations = super().generate(prompts, params)
        return [
            Generation("", [], [], "stop", error="HTTP 400: tool choice unsupported")
            if self.refused in self.tokenizer.decode(ids)
            else g
            for ids, g in zip(prompts, generations)
        ]


def test_a_failed_policy_request_fails_only_its_episode_and_never_reaches_the_env(tokenizer):
    calm, refused = play(FailingRequests(tokenizer, SCRIPTS, refused="the crash"), [0, 1]).trajectories
    assert refused.failed and refused.error == "policy request failed: HTTP 400: tool choice unsupported"
    assert refused.episode.num_turns == 0 and refused.completion_ids == []
    assert not calm.failed and calm.episode.num_turns == 3
