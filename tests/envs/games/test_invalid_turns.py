"""Every game reports a policy mistake as ``action_valid=False`` with ``action_error``, never ``info["error"]``
(which is reserved for failures that are not the policy's fault and that trainers drop) and never an exception;
an invalid turn is never a free retry, and stalling never earns more than legal play."""

import pytest

import envgym

GAMES = ["games/GuessNumber-v0", "games/Wordle-v0", "games/Mastermind-v0", "games/TicTacToe-v0", "games/Bandit-v0"]
TAGS = {
    "games/GuessNumber-v0": "guess",
    "games/Wordle-v0": "guess",
    "games/Mastermind-v0": "guess",
    "games/TicTacToe-v0": "move",
    "games/Bandit-v0": "pull",
}
# What a policy writes that no game may read as a move: other scripts' digits, superscripts, huge numbers, NaN,
# floats, unclosed, nested and flooded tags.
ATTACKS = [
    "²",
    "٣",
    "３",
    "३",
    "¹²",
    "1" + "0" * 100_000,
    "nan",
    "inf",
    "1e3",
    "2.5",
    "{tag}",
    "<{tag}>3",
    "<{tag}><{tag}>",
    "</{tag}>3",
    "<{tag}>" * 12_000,
]
# A legal move that earns nothing and teaches nothing: the worst honest play there is in each game.
# (TicTacToe's worst legal play is a loss; the Bandit's, the worst arm, is found by pulling each.)
WORST_LEGAL = {
    "games/GuessNumber-v0": "<guess>0</guess>",
    "games/Wordle-v0": "<guess>zzzzz</guess>",
    "games/Mastermind-v0": "<guess>1 1 1 1</guess>",
}


@pytest.mark.parametrize("env_id", GAMES)
def test_a_turn_without_a_tag_is_an_action_error_not_an_error(env_id):
    env = envgym.make(env_id)
    env.reset(seed=0, options={"task_index": 0})
    messages, _, _, _, info = env.step("I am not sure what to do.")
    assert info["action_valid"] is False
    assert isinstance(info["action_error"], str) and info["action_error"] in messages[0]["content"]
    assert "error" not in info


@pytest.mark.parametrize("attack", ATTACKS, ids=lambda attack: attack[:10])
@pytest.mark.parametrize("env_id", GAMES)
def test_malformed_numbers_and_tags_are_invalid_turns_never_exceptions(env_id, attack):
    env = envgym.make(env_id)
    env.reset(seed=0, options={"task_index": 0})
    tag = TAGS[env_id]
    text = attack.format(tag=tag) if attack.startswith(("{", "<", "</")) else f"<{tag}>{attack}</{tag}>"
    _, _, _, _, info = env.step(text)
    assert info["action_valid"] is False and info["action_error"] and "error" not in info


def total_reward(env, action: str, index: int) -> float:
    env.reset(seed=index, options={"task_index": index})
    total = 0.0
    while True:
        _, reward, terminated, truncated, _ = env.step(action)
        total += reward
        if terminated or truncated:
            return total


@pytest.mark.parametrize("env_id", GAMES)
def test_stalling_to_the_end_earns_no_more_than_the_worst_legal_play(env_id):
    env = envgym.make(env_id)
    for index in range(5):
        stalled = total_reward(env, "Let me think about it some more.", index)
        if env_id == "games/TicTacToe-v0":
            worst = -1.0  # a loss
        elif env_id == "games/Bandit-v0":
            worst = min(total_reward(env, f"<pull>{arm}</pull>", index) for arm in range(1, 6))
        else:
            worst = total_reward(env, WORST_LEGAL[env_id], index)
        assert stalled <= worst, (index, stalled, worst)


@pytest.mark.parametrize("env_id", GAMES)
def test_the_reference_action_through_make_plays_every_task_to_its_best_outcome(env_id):
    """Through the registry's wrappers (TimeLimit, PromptPrefix); Bandit's best is zero regret, TicTacToe's a win
    against the default greedy opponent, every other game's the +1 of solving it."""
    env = envgym.make(env_id, system_prompt="Play well.")
    for index in range(5):
        env.reset(seed=index, options={"task_index": index})
        while True:
            _, _, terminated, truncated, info = env.step(env.reference_action())
            assert info["action_valid"] is True
            if terminated or truncated:
                break
        assert terminated and not truncated
        if env_id == "games/Bandit-v0":
            assert info["cumulative_regret"] == 0.0
        else:
            assert info["correct"] is True


@pytest.mark.parametrize("env_id", GAMES)
def test_the_wrong_action_is_legal_play_that_never_wins(env_id):
    env = envgym.make(env_id)
    for index in range(5):
        env.reset(seed=index, options={"task_index": index})
        while True:
            _, _, terminated, truncated, info = env.step(env.wrong_action())
            assert info["action_valid"] is True and not info.get("correct")
            if terminated or truncated:
                break
