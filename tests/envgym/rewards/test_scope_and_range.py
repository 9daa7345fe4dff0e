"""Answer components are scored once per episode, on the answering turn; noise flips within a component's range;
a failure the policy causes scores the minimum and is counted, never dropped."""

import math

import numpy as np
import pytest

import envgym
from envgym.core import Env
from envgym.rewards import RewardSpecError, apply_reward

FLIP_40 = {"name": "noise", "source": "flip", "rate": 0.4, "applies_to": "correct", "seed": 0}
SEEDS = range(200)


def _episode_return(env, seed: int, actions) -> tuple[float, list[dict]]:
    env.reset(seed=seed, options={"task_index": seed})
    total, infos = 0.0, []
    for action in actions(env):
        _, reward, terminated, truncated, info = env.step(action)
        total, infos = total + reward, [*infos, info]
        if terminated or truncated:
            break
    return total, infos


def _mean_return(env_id: str, spec: dict, actions) -> float:
    env = envgym.make(env_id, reward=spec)
    return float(np.mean([_episode_return(env, seed, actions)[0] for seed in SEEDS]))


def _padded_wrong_calculator(env):
    yield from ["<calc>1 + 1</calc>", "<calc>2 + 2</calc>", "<calc>3 + 3</calc>", "\\boxed{0}"]


def _correct_calculator(env):
    yield env.reference_action()


def test_padding_calculator_turns_before_a_wrong_answer_does_not_out_earn_the_correct_one_under_flips():
    spec = {"components": [{"name": "correct", "source": "env"}, FLIP_40]}
    padded = _mean_return("math/Calculator-v0", spec, _padded_wrong_calculator)
    correct = _mean_return("math/Calculator-v0", spec, _correct_calculator)
    assert padded < correct
    assert padded == pytest.approx(0.4, abs=0.08) and correct == pytest.approx(0.6, abs=0.08)


def _never_finding(env):
    while True:
        yield env.wrong_action()


def _binary_search(env):
    while True:
        yield env.reference_action()


def test_never_finding_the_number_does_not_beat_finding_it_with_format_pattern_and_flips():
    spec = {
        "components": [
            {"name": "correct", "source": "env"},
            {"name": "format", "source": "format", "pattern": r"<guess>\d+</guess>", "weight": 0.1},
            {"name": "reasoning", "source": "pattern", "pattern": "guess", "weight": 0.1},
            FLIP_40,
        ]
    }
    never = _mean_return("games/GuessNumber-v0", spec, _never_finding)
    finding = _mean_return("games/GuessNumber-v0", spec, _binary_search)
    assert never < finding


def test_a_format_reward_is_paid_once_per_episode_on_the_answering_turn():
    spec = {"components": [{"name": "format", "source": "format", "pattern": r"<guess>\d+</guess>"}]}
    env = envgym.make("games/GuessNumber-v0", reward=spec)
    total, infos = _episode_return(env, 0, _never_finding)
    assert total == 1.0 and [info["answer_turn"] for info in infos] == [False] * 9 + [True]


def test_a_minus_one_forfeit_never_flips_above_the_ranges_top():
    spec = {
        "components": [
            {"name": "outcome", "source": "env"},
            {"name": "noise", "source": "flip", "rate": 1.0, "applies_to": "outcome"},
        ]
    }
    env = envgym.make("games/TicTacToe-v0", reward=spec)
    env.reset(seed=0, options={"task_index": 0})
    _, reward, terminated, _, info = env.step("<move>no</move>")
    assert terminated and info["reward_noise"] == {"component": "outcome", "before": -1.0, "after": 1.0}
    assert reward == 1.0


def test_a_flip_mirrors_within_a_range_the_spec_gives():
    spec = {
        "components": [
            {"name": "correct", "source": "env", "range": [0, 4]},
            {"name": "noise", "source": "flip", "rate": 1.0, "applies_to": "correct"},
        ]
    }
    env = envgym.make("math/Arithmetic-v0", difficulty=1, reward=spec)
    env.reset(seed=0, options={"task_index": 0})
    assert env.step("\\boxed{-12345}")[1] == 4.0  # 0 + 4 - 0
    env.reset(seed=0, options={"task_index": 0})
    assert env.step(env.reference_action())[1] == 3.0  # 0 + 4 - 1


def test_a_flip_on_an_unbounded_component_is_refused_with_the_fix():
    spec = {
        "components": [
            {"name": "tools", "source": "tool_cost"},
            {"name": "noise", "source": "flip", "rate": 0.5, "applies_to": "tools"},
        ]
    }
    with pytest.raises(RewardSpecError, match=r"flips 'tools', whose values are unbounded .* give 'tools' a range"):
        envgym.make("math/Calculator-v0", reward=spec)


def _stall(env):
    while True:
        yield "<calc>1 + 1</calc>"


def test_stalling_with_tool_calls_until_the_turn_limit_scores_the_minimum_and_is_counted():
    env = envgym.make("math/Calculator-v0", reward={"components": [{"name": "correct", "source": "env"}]})
    total, infos = _episode_return(env, 0, _stall)
    last = infos[-1]
    assert len(infos) == 4 and total == 0.0 and "error" not in last
    assert last["reward_failures"] == {"correct": "the episode ended without an answer for 'correct'"}


class _AnswersEarly(Env):
    """Marks its second turn as the answer, then asks a follow-up question before the episode ends."""

    reward_ranges = {"correct": envgym.RewardRange(), "chat": envgym.RewardRange(per_turn=True)}

    def _reset(self, task, options):
        self.turn = 0
        return [{"role": "user", "content": "go"}], {}

    def _step(self, action):
        self.turn += 1
        info = {"reward_components": {"correct": 1.0, "chat": 0.5}, "answer_turn": self.turn == 2}
        return [], 1.5, self.turn == 4, False, info


def test_an_answer_component_is_scored_on_the_turn_the_env_marks_as_the_answer_and_nowhere_else():
    spec = {"components": [{"name": "correct", "source": "env"}, {"name": "chat", "source": "env"}]}
    env = apply_reward(_AnswersEarly(), spec)
    env.reset()
    rewards = [env.step("x")[1] for _ in range(4)]
    assert rewards == [0.5, 1.5, 0.5, 0.5]


class _NotANumber(Env):
    def _reset(self, task, options):
        return [], {}

    def _step(self, action):
        return [], math.nan, True, False, {"reward_components": {"correct": math.nan}}


def test_a_value_that_is_not_a_finite_number_scores_the_minimum_as_a_policy_failure():
    env = apply_reward(_NotANumber(), {"components": [{"name": "correct", "source": "env"}]})
    env.reset()
    _, reward, _, _, info = env.step("nan")
    assert reward == 0.0 and "not a finite number" in info["reward_failures"]["correct"]


def test_an_env_that_declares_nothing_warns_once_when_an_episode_ends_without_the_component():
    env = apply_reward(_NotANumber(), {"components": [{"name": "corect", "source": "env"}]})
    env.reset()
    with pytest.warns(UserWarning, match=r"without reporting 'corect' .* Declare Env.reward_ranges"):
        info = env.step("x")[4]
    assert "corect" in info["reward_failures"]
