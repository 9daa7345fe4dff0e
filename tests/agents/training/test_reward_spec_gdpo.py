"""A reward spec's components reach GDPO raw: each normalized in its group unweighted, then weighted."""

import math

import httpx
import pytest

pytest.importorskip("torch")

import envgym  # noqa: E402
from envgym.agents.training.advantages import turn_advantages  # noqa: E402
from envgym.agents.training.config import GRPOConfig  # noqa: E402
from envgym.rewards import judge_reward  # noqa: E402
from envgym.verifiers.judge import Judge  # noqa: E402

EPS = GRPOConfig().advantage_epsilon


def _grading_judge(request: httpx.Request) -> httpx.Response:
    score = 10 if "carefully" in request.read().decode() else 5
    return httpx.Response(200, json={"choices": [{"message": {"content": f'{{"score": {score}}}'}}]})


def test_gdpo_normalizes_judge_and_verifier_components_raw_then_weights_them(monkeypatch):
    judge = Judge(
        "http://judge/v1", "m", retries=0, http_client=httpx.Client(transport=httpx.MockTransport(_grading_judge))
    )
    monkeypatch.setattr(judge_reward, "shared_judge", lambda component: judge)
    spec = {
        "components": [
            {"name": "correct", "source": "env", "weight": 1.0},
            {"name": "judge", "source": "judge", "base_url": "http://judge/v1", "model": "m", "weight": 0.5},
        ]
    }
    env = envgym.make("math/Arithmetic-v0", difficulty=1, reward=spec)
    env.reset(seed=0, options={"task_index": 0})
    right, wrong = f"\\boxed{{{env.task.answer}}}", "\\boxed{-1}"
    components, weights, rewards = [], [], []
    for response in ("carefully " + right, right, "carefully " + wrong, wrong):
        env.reset(seed=0, options={"task_index": 0})
        _, reward, _, _, info = env.step(response)
        components.append([info["reward_components"]])
        weights.append([info["reward_weights"]])
        rewards.append([reward])
    assert [r[0] for r in rewards] == [1.5, 1.25, 0.5, 0.25]
    # Raw correct 1,1,0,0: mean 1/2, std sqrt(1/3). Raw judge 1,.5,1,.5: mean 3/4, std sqrt(1/12).
    z_correct = [(v - 0.5) / (math.sqrt(1 / 3) + EPS) for v in (1, 1, 0, 0)]
    z_judge = [(v - 0.75) / (math.sqrt(1 / 12) + EPS) for v in (1, 0.5, 1, 0.5)]
    summed = [c + 0.5 * j for c, j in zip(z_correct, z_judge)]
    std = math.sqrt(sum(x * x for x in summed) / 3)  # the batch mean is 0
    expected = [x / (std + EPS) for x in summed]
    result = turn_advantages([rewards], GRPOConfig(advantage="gdpo"), [components], [weights])
    assert [episode[0] for episode in result[0]] == pytest.approx(expected)
