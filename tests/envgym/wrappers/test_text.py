from envgym.envs.games.guess_number import GuessNumber
from envgym.wrappers import ChatToText


def test_chat_to_text_builds_one_continuable_transcript():
    env = ChatToText(GuessNumber())
    prompt, _ = env.reset(seed=0)
    assert prompt.startswith("user: I am thinking") and prompt.endswith("assistant:")
    completion = " <guess>50</guess>"
    feedback, *_ = env.step(completion)
    transcript = prompt + completion + feedback
    assert "</guess>\nuser: 50 is too" in transcript and transcript.endswith("assistant:")
    assert isinstance(feedback, str) and feedback in env.observation_space


def test_the_reference_action_passes_through_since_actions_stay_text():
    env = ChatToText(GuessNumber())
    env.reset(seed=0, options={"task_index": 0})
    assert env.reference_action() == env.unwrapped.reference_action() == "<guess>50</guess>"
    assert env.wrong_action() == env.unwrapped.wrong_action()
