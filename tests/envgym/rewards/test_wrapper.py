import httpx
import pytest
from helpers.openai_server import free_port

import envgym
from envgym.core import Env
from envgym.rewards import apply_reward, judge_reward
from envgym.verifiers.judge import Judge


def _arithmetic(components, **spec):
    env = envgym.make("math/Arithmetic-v0", difficulty=1, reward={"components": components, **spec})
    env.reset(seed=0, options={"task_index": 0})
    return env


def _answer(env):
    return f"\\boxed{{{env.task.answer}}}"


def test_an_env_component_is_weighted():
    env = _arithmetic([{"name": "correct", "source": "env", "weight": 2.0}])
    _, reward, _, _, info = env.step(_answer(env))
    assert reward == 2.0 and info["reward_components"] == {"correct": 2.0}
    assert info["reward_weights"] == {"correct": 2.0} and info["reward_raw_components"] == {"correct": 1.0}


def test_an_env_component_can_be_renamed():
    env = _arithmetic([{"name": "accuracy", "source": "env", "component": "correct"}])
    assert env.step(_answer(env))[4]["reward_components"] == {"accuracy": 1.0}


def test_env_components_the_spec_does_not_name_leave_the_reward():
    env = _arithmetic([{"name": "reasoning", "source": "pattern", "pattern": "first", "weight": 0.5}])
    _, reward, _, _, info = env.step("first, " + _answer(env))
    assert reward == 0.5 and info["env_reward_components"] == {"correct": 1.0}


def test_a_gate_zeroes_the_component_when_the_gate_fails():
    components = [
        {"name": "correct", "source": "env", "gate": "format"},
        {"name": "format", "source": "format", "pattern": r"^Answer: ", "weight": 0.1},
    ]
    env = _arithmetic(components)
    _, reward, _, _, info = env.step(_answer(env))
    assert reward == 0.0 and info["reward_components"] == {"correct": 0.0, "format": 0.0}
    env.reset(seed=0, options={"task_index": 0})
    _, reward, _, _, info = env.step("Answer: " + _answer(env))
    assert reward == pytest.approx(1.1) and info["reward_raw_components"] == {"correct": 1.0, "format": 1.0}


def test_a_pattern_list_scores_the_share_found_times_the_weight():
    patterns = [r"\bfirst\b", r"\bthen\b", r"\btherefore\b", r"\bwait\b"]
    env = _arithmetic([{"name": "reasoning", "source": "pattern", "patterns": patterns, "weight": 0.2}])
    _, reward, _, _, info = env.step("First add, therefore " + _answer(env))  # 2 of 4 found: 0.5 * 0.2
    assert reward == pytest.approx(0.1) and info["reward_raw_components"] == {"reasoning": 0.5}


def test_length_is_dapo_soft_overlong_times_the_weight():
    env = _arithmetic([{"name": "length", "source": "length", "max_length": 20, "buffer": 4, "weight": 2.0}])
    _, reward, _, _, _ = env.step("x" * 18)  # (16 - 18) / 4 = -0.5, times 2
    assert reward == pytest.approx(-1.0)


def test_flip_noise_at_rate_one_flips_the_raw_value_before_the_weight():
    components = [
        {"name": "correct", "source": "env", "weight": 3.0},
        {"name": "noise", "source": "flip", "rate": 1.0, "applies_to": "correct"},
    ]
    env = _arithmetic(components)
    _, reward, _, _, info = env.step(_answer(env))
    assert reward == 0.0 and info["reward_noise"] == {"component": "correct", "before": 1.0, "after": 0.0}
    env.reset(seed=0, options={"task_index": 0})
    assert env.step("\\boxed{-1}")[1] == 3.0


def test_flip_noise_flips_the_configured_share_reproducibly():
    components = [
        {"name": "correct", "source": "env"},
        {"name": "noise", "source": "flip", "rate": 0.4, "applies_to": "correct", "seed": 7},
    ]

    def flips():
        env = envgym.make("math/Arithmetic-v0", difficulty=1, reward={"components": components})
        out = []
        for seed in range(200):
            env.reset(seed=seed, options={"task_index": 0})
            out.append("reward_noise" in env.step(_answer(env))[4])
        return out

    first = flips()
    assert first == flips() and 0.3 < sum(first) / len(first) < 0.5


class _ToolTurns(Env):
    """Reports the tool calls it was told to."""

    def _reset(self, task, options):
        return [{"role": "user", "content": "go"}], {}

    def _step(self, action):
        return [], 1.0, True, False, {"reward_components": {"done": 1.0}, "tool_calls": [{"name": "a"}, {"name": "b"}]}


def test_tool_cost_is_minus_the_calls_times_the_weight():
    spec = {"components": [{"name": "done", "source": "env"}, {"name": "tools", "source": "tool_cost", "weight": 0.1}]}
    env = apply_reward(_ToolTurns(), spec)
    env.reset()
    _, reward, _, _, info = env.step("call")
    assert info["reward_components"] == {"done": 1.0, "tools": pytest.approx(-0.2)} and reward == pytest.approx(0.8)


def test_an_env_component_the_env_never_reports_is_refused_when_the_spec_is_applied():
    with pytest.raises(
        ValueError,
        match=r"components\[0\] reads env component 'style', which Arithmetic never reports; it reports \['correct'\]",
    ):
        _arithmetic([{"name": "style", "source": "env"}])


def _judge_replying(monkeypatch, reply: str) -> list:
    seen = []

    def handler(request):
        seen.append(request.read().decode())
        return httpx.Response(200, json={"choices": [{"message": {"content": reply}}]})

    judge = Judge(
        "http://judge/v1", "m", retries=1, backoff=0, http_client=httpx.Client(transport=httpx.MockTransport(handler))
    )
    monkeypatch.setattr(judge_reward, "shared_judge", lambda component: judge)
    return seen


JUDGE = {"name": "judge", "source": "judge", "base_url": "http://judge/v1", "model": "m", "weight": 0.5}


def test_the_judge_scores_the_final_turn_with_the_label_as_reference(monkeypatch):
    seen = _judge_replying(monkeypatch, 'Right. {"score": 8}')
    env = _arithmetic([JUDGE])
    _, reward, _, _, info = env.step(_answer(env))
    assert reward == pytest.approx(0.4) and info["reward_raw_components"] == {"judge": 0.8}
    assert "<reference>" in seen[0] and "Compute" in seen[0]


def test_a_judge_reply_without_a_score_scores_0_as_the_policys_failure(monkeypatch):
    _judge_replying(monkeypatch, "I cannot tell.")
    env = _arithmetic([JUDGE])
    _, reward, _, _, info = env.step(_answer(env))
    assert reward == 0.0 and "error" not in info
    assert "had no score after 2 attempts" in info["reward_failures"]["judge"]


def test_an_unreachable_judge_is_the_episodes_error():
    judge = dict(JUDGE, base_url=f"http://127.0.0.1:{free_port()}/v1", retries=0, timeout=2.0)
    env = _arithmetic([judge])
    info = env.step(_answer(env))[4]
    assert "judge 'judge' failed" in info["error"]


def test_make_refuses_a_bad_spec_before_building_the_env():
    with pytest.raises(ValueError, match=r"reward.components\[0\].weight must be a number"):
        envgym.make("math/Arithmetic-v0", reward={"components": [{"name": "c", "source": "env", "weight": "x"}]})


class _WeightedTurns(Env):
    """Reports a component it weighted itself (0.25 x a raw value of 1)."""

    def _reset(self, task, options):
        return [], {}

    def _step(self, action):
        return [], 0.25, True, False, {"reward_components": {"style": 0.25}, "reward_weights": {"style": 0.25}}


def test_an_env_component_the_env_weighted_is_unweighted_before_the_specs_weight():
    env = apply_reward(_WeightedTurns(), {"components": [{"name": "style", "source": "env", "weight": 2.0}]})
    env.reset()
    _, reward, _, _, info = env.step("x")
    assert info["reward_raw_components"] == {"style": 1.0} and reward == 2.0
