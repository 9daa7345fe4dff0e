"""The Env contract: reset/step, determinism, and the bad-input rules."""

import pytest

import envgym
from envgym import InvalidAction, InvalidOptions, ResetNeeded, Task
from envgym.core import AssistantAction, Messages, action_text


@pytest.fixture
def env():
    return envgym.make("games/GuessNumber-v0")


def test_reset_returns_new_messages_and_info(env):
    messages, info = env.reset(seed=0)
    assert messages and messages[0]["role"] == "user"
    assert info["task_id"].startswith("guess-")


def test_same_seed_gives_same_task_and_observations(env):
    assert env.reset(seed=7) == env.reset(seed=7)
    env.reset(seed=7)
    first = env.step("<guess>50</guess>")
    env.reset(seed=7)
    assert env.step("<guess>50</guess>") == first


def test_task_index_picks_the_same_task_whatever_the_seed(env):
    env.reset(seed=1, options={"task_index": 5})
    secret_a = env.unwrapped.secret
    env.reset(seed=2, options={"task_index": 5})
    assert env.unwrapped.secret == secret_a
    assert env.task.id.endswith("-5")


def test_a_given_task_is_played(env):
    task = env.unwrapped.tasks.get(0)
    task = Task(id="mine", messages=task.messages, answer=42)
    _, info = env.reset(options={"task": task})
    assert info["task_id"] == "mine"
    assert env.step("<guess>42</guess>")[2] is True


def test_step_before_reset_raises():
    with pytest.raises(ResetNeeded, match="before reset"):
        envgym.make("games/GuessNumber-v0", max_turns=None).step("<guess>1</guess>")


def test_step_after_the_episode_ended_raises(env):
    env.reset(options={"task": Task("t", [{"role": "user", "content": "go"}], answer=3)})
    env.step("<guess>3</guess>")
    with pytest.raises(ResetNeeded, match="ended"):
        env.step("<guess>3</guess>")


@pytest.mark.parametrize(
    "bad",
    [
        None,
        3,
        1.5,
        ["text"],
        b"bytes",
        {"role": "user", "content": "x"},
        {"content": 5},
        {"content": [{"type": "text", "text": 5}]},
        {"content": ["bare string part"]},
    ],
)
def test_wrong_action_types_raise_and_leave_the_episode_alone(env, bad):
    env.reset(seed=3)
    with pytest.raises(InvalidAction, match="action"):
        env.step(bad)
    _, _, _, _, info = env.step("<guess>50</guess>")
    assert info["turn"] == 1  # the rejected action did not count as a turn


def test_assistant_message_dict_is_accepted(env):
    env.reset(seed=3)
    _, _, _, _, info = env.step({"role": "assistant", "content": "<guess>50</guess>"})
    assert info["action_valid"] is True


def test_huge_action_is_bounded_and_flagged(env):
    env.reset(seed=3)
    _, _, _, _, info = env.step("x" * 10_000_000 + "<guess>50</guess>")
    assert info["action_truncated"] is True
    assert info["action_valid"] is False  # the guess was beyond the cut


@pytest.mark.parametrize(
    "options", ["task 1", {"task_index": "1"}, {"task_index": -1}, {"task_index": True}, {"task": "t"}]
)
def test_malformed_options_raise(env, options):
    with pytest.raises(InvalidOptions):
        env.reset(options=options)


def test_task_index_out_of_range_names_the_size():
    env = envgym.make("games/GuessNumber-v0")
    with pytest.raises(InvalidOptions, match="out of range"):
        env.reset(options={"task_index": 2**40})


def test_spaces_accept_what_envs_produce():
    assert [{"role": "user", "content": "hi"}] in Messages()
    assert [{"role": "robot", "content": "hi"}] not in Messages()
    assert "text" in AssistantAction() and {"role": "assistant", "content": None, "tool_calls": []} in AssistantAction()
    assert 5 not in AssistantAction()


def test_action_text_reads_strings_dicts_and_content_parts():
    assert action_text("a") == "a"
    assert action_text({"role": "assistant", "content": None}) == ""
    assert (
        action_text({"role": "assistant", "content": [{"type": "text", "text": "x"}, {"type": "text", "text": "y"}]})
        == "xy"
    )


def test_render_ansi_shows_the_last_turn():
    env = envgym.make("games/GuessNumber-v0", render_mode="ansi")
    env.reset(seed=0)
    env.step("<guess>50</guess>")
    assert "[assistant] <guess>50</guess>" in env.render()


def test_async_api_matches_sync(env):
    import asyncio

    async def play():
        messages, _ = await env.areset(seed=4)
        return messages, await env.astep("<guess>50</guess>")

    async_result = asyncio.run(play())
    sync_messages, _ = env.reset(seed=4)
    assert async_result == (sync_messages, env.step("<guess>50</guess>"))
