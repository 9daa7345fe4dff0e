"""MultiAgentEnv: seats take turns, each sees only its own messages, each gets its own reward, the end ends all."""

import pytest

import envgym
from envgym.core import ResetNeeded, Task, action_text
from envgym.multiagent import MultiAgentEnv, SeatTurn, is_multi_agent
from envgym.tasks import ListTaskSource
from envgym.utils import check_env


class HighCard(MultiAgentEnv):
    """Seats ``a`` then ``b`` each name a number once; the higher number wins +1, the other -1 (tie: 0 each).
    ``a`` is told a private hint that ``b`` must never see."""

    agents = ("a", "b")

    def __init__(self):
        self.tasks = ListTaskSource([Task("t0", [{"role": "user", "content": "a: say a number. Private hint: 7."}])])

    def _reset_seats(self, task, options):
        self.numbers = {}
        return "a", task.prompt(), {}

    def _play(self, agent, action):
        text = action_text(action).strip()
        if not text.isdigit():
            return SeatTurn(
                {agent: [{"role": "user", "content": "Not a number: you lose."}]},
                {agent: {"outcome": -1.0}},
                None,
                {"action_valid": False, "action_error": "not a number"},
            )
        self.numbers[agent] = int(text)
        if agent == "a":
            return SeatTurn({"b": [{"role": "user", "content": "b: say a number."}]}, {}, "b", {"action_valid": True})
        a, b = self.numbers["a"], self.numbers["b"]
        score = (a > b) - (a < b)
        result = {"role": "user", "content": f"{a} vs {b}."}
        rewards = {"a": {"outcome": float(score)}, "b": {"outcome": float(-score)}}
        return SeatTurn({"a": [result], "b": [result]}, rewards, None, {"action_valid": True})


def test_reset_gives_the_first_seat_and_names_every_seat():
    messages, info = HighCard().reset(seed=0)
    assert info["agent"] == "a" and info["agents"] == ["a", "b"]
    assert "Private hint" in messages[0]["content"]
    assert is_multi_agent(info)


def test_seats_take_turns_and_step_returns_the_next_seats_messages_only():
    env = HighCard()
    env.reset(seed=0)
    assert env.agent_selection == "a"
    messages, reward, terminated, truncated, info = env.step("5")
    assert (info["acting_agent"], info["agent"], env.agent_selection) == ("a", "b", "b")
    assert messages == [{"role": "user", "content": "b: say a number."}]
    assert "hint" not in str(messages)  # b never sees a's private prompt
    assert (reward, terminated, truncated) == (0.0, False, False)


def test_each_seat_gets_its_own_reward_on_the_turn_that_decides_it():
    env = HighCard()
    env.reset(seed=0)
    env.step("5")
    _, reward, terminated, _, info = env.step("9")
    assert terminated and reward == 1.0  # the acting seat's (b's) reward
    assert info["rewards"] == {"a": -1.0, "b": 1.0}
    assert info["agent_reward_components"] == {"a": {"outcome": -1.0}, "b": {"outcome": 1.0}}
    assert info["reward_components"] == {"outcome": 1.0}
    assert env.cumulative_rewards == {"a": -1.0, "b": 1.0}


def test_the_end_gives_every_seat_its_last_messages_and_ends_the_episode_for_all():
    env = HighCard()
    env.reset(seed=0)
    env.step("5")
    messages, _, _, _, info = env.step("3")
    assert info["observations"] == {"a": [{"role": "user", "content": "5 vs 3."}], "b": messages}
    assert env.agent_selection is None
    with pytest.raises(ResetNeeded):
        env.step("1")


def test_a_policy_mistake_ends_the_game_with_the_seats_own_penalty():
    env = HighCard()
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step("five")
    assert terminated and reward == -1.0 and info["action_valid"] is False
    assert info["rewards"] == {"a": -1.0, "b": 0.0}


def test_a_seat_the_env_does_not_have_is_a_clear_error():
    class Typo(HighCard):
        def _play(self, agent, action):
            return SeatTurn({"c": []}, {}, "b")

    env = Typo()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="unknown seats \\['c'\\]"):
        env.step("1")


def test_reset_starts_every_seat_afresh():
    env = HighCard()
    env.reset(seed=0)
    env.step("5")
    env.step("9")
    _, info = env.reset(seed=0)
    assert info["agent"] == "a" and env.cumulative_rewards == {"a": 0.0, "b": 0.0}


def test_a_registered_multi_agent_env_passes_check_env(scratch_registry):
    envgym.register("test/HighCard-v0", HighCard, max_turns=4)
    check_env(envgym.make("test/HighCard-v0"), probe_actions=("4", "2", "x"))


def test_is_multi_agent_is_false_for_a_single_agent_reset():
    _, info = envgym.make("games/GuessNumber-v0").reset(seed=0)
    assert not is_multi_agent(info)
