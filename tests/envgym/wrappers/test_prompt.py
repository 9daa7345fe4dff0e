import pytest

import envgym
from envgym.wrappers import PromptPrefix

SHOT = [{"role": "user", "content": "Compute 3 + 4."}, {"role": "assistant", "content": "3 + 4 = 7. \\boxed{7}"}]


def test_make_puts_the_system_prompt_and_examples_before_the_task_and_leaves_grading_alone():
    env = envgym.make("math/Arithmetic-v0", difficulty=1, system_prompt="Box the result.", few_shot=SHOT)
    plain = envgym.make("math/Arithmetic-v0", difficulty=1)
    messages, _ = env.reset(options={"task_index": 5})
    task_messages, _ = plain.reset(options={"task_index": 5})
    assert messages == [{"role": "system", "content": "Box the result."}, *SHOT, *task_messages]
    # the example's answer is not this task's: only the task is graded
    _, reward, terminated, _, info = env.step(f"\\boxed{{{env.task.answer}}}")
    assert (reward, terminated, info["correct"]) == (1.0, True, True)


def test_an_env_with_its_own_system_message_keeps_one_system_message():
    env = envgym.make("tools/ShopOrders-v0", system_prompt="Be brief.", few_shot=SHOT)
    messages, _ = env.reset(options={"task_index": 0})
    plain_messages, _ = envgym.make("tools/ShopOrders-v0").reset(options={"task_index": 0})
    assert plain_messages[0]["role"] == "system"
    assert [m["role"] for m in messages].count("system") == 1
    assert messages[0]["content"] == "Be brief.\n\n" + plain_messages[0]["content"]
    assert messages[1:3] == SHOT and messages[3:] == plain_messages[1:]


def test_examples_are_copies_so_an_episode_cannot_change_the_next_ones_prompt():
    env = PromptPrefix(envgym.make("math/Arithmetic-v0"), few_shot=SHOT)
    first, _ = env.reset(seed=0)
    first[0]["content"] = "changed"
    second, _ = env.reset(seed=0)
    assert second[0] == SHOT[0]


def test_max_turns_still_applies_outside_the_prefix():
    env = envgym.make("games/GuessNumber-v0", system_prompt="Guess well.", max_turns=2)
    env.reset(seed=0)
    env.step("50")
    assert env.step("25")[3] is True


@pytest.mark.parametrize(
    "few_shot, message",
    [
        ("3 + 4 = 7", "list of chat messages"),
        ([{"role": "user", "content": "hi"}], "end with an assistant message"),
        ([{"role": "assistant", "content": "hi"}, {"role": "user", "content": "x"}], "few_shot\\[0\\] must be"),
        ([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}], "few_shot\\[1\\] must be"),
        ([{"role": "user", "content": None}, {"role": "assistant", "content": "b"}], "few_shot\\[0\\] must be"),
    ],
)
def test_malformed_examples_are_refused_with_what_is_accepted(few_shot, message):
    with pytest.raises(ValueError, match=message):
        envgym.make("math/Arithmetic-v0", few_shot=few_shot)


def test_an_empty_system_prompt_is_refused():
    with pytest.raises(ValueError, match="non-empty string"):
        envgym.make("math/Arithmetic-v0", system_prompt="  ")


def test_an_env_that_takes_system_prompt_itself_keeps_its_own_meaning():
    # math/Dataset-v0's system_prompt replaces its preset's; it is not wrapped a second time
    env = envgym.make("math/Dataset-v0", system_prompt="Answer in one line.")
    assert not isinstance(env, PromptPrefix)
    messages, _ = env.reset(options={"task_index": 0})
    assert [m for m in messages if m["role"] == "system"] == [{"role": "system", "content": "Answer in one line."}]


def test_in_a_multi_agent_env_every_seats_first_messages_get_the_prefix_once():
    env = envgym.make(
        "games/TicTacToe-v0",
        opponent="self",
        max_opening_plies=0,
        system_prompt="Play well.",
        few_shot=[{"role": "user", "content": "Example board"}, {"role": "assistant", "content": "<move>5</move>"}],
    )
    first, _ = env.reset(seed=0)
    second = env.step("<move>5</move>")[0]  # O's first messages: its prompt
    third = env.step("<move>1</move>")[0]  # X again: no second prefix
    assert [m["role"] for m in first] == [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert "You play O" in second[-1]["content"] and [m["role"] for m in third] == ["user"]
