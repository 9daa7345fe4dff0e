"""Simulated users: the scripted user's reveal order, the LLM user over a scripted OpenAI-compatible transport."""

import httpx
import pytest

from envgym.users import STOP, LLMUser, ScriptedUser, UserError, make_user

GOAL = ["Cancel Ada's kettle order.", "Move Bruno to 3 Elm Street, Leeds."]


def test_scripted_user_reveals_the_goal_in_order_one_piece_per_question():
    user = ScriptedUser()
    user.start(GOAL)
    assert user.reply("How can I help?").text == GOAL[0]
    assert user.reply("Anything else?").text == GOAL[1]
    assert user.reply("Anything else?").text == "That is everything I need."


def test_scripted_user_repeats_itself_when_asked_nothing():
    user = ScriptedUser()
    user.start(GOAL)
    assert "ask me" in user.reply("Hello.").text
    user.reply("What do you need?")
    assert user.reply("Working on it.").text == f"As I said: {GOAL[0]}"


def test_scripted_user_ends_on_a_final_message_after_everything_is_out():
    user = ScriptedUser()
    user.start(GOAL[:1])
    user.reply("What do you need?")
    assert user.reply("All done.").stop


def _transport(replies):
    """A scripted OpenAI-compatible endpoint: each request gets the next reply (a text or an HTTP status)."""
    seen = []

    def handle(request):
        seen.append(request)
        reply = replies.pop(0)
        if isinstance(reply, int):
            return httpx.Response(reply, json={"error": "down"})
        return httpx.Response(200, json={"choices": [{"message": {"role": "assistant", "content": reply}}]})

    return httpx.MockTransport(handle), seen


def test_llm_user_speaks_from_the_endpoint_with_flipped_roles():
    transport, seen = _transport([GOAL[0], f"Thanks! {STOP}"])
    user = LLMUser("http://user.test/v1", "m", client=httpx.Client(transport=transport), retries=0)
    user.start(GOAL)
    assert user.reply("How can I help?").text == GOAL[0]
    final = user.reply("Done.")
    assert final.stop and final.text == "Thanks!"
    assert seen[0].url.path == "/v1/chat/completions"
    assert b"Cancel Ada" in seen[0].content  # the goal is in the user's system prompt


def test_llm_user_retries_a_failed_request():
    transport, _ = _transport([500, GOAL[0]])
    user = LLMUser("http://user.test/v1", "m", client=httpx.Client(transport=transport), retries=1)
    user.start(GOAL)
    assert user.reply("How can I help?").text == GOAL[0]


def test_llm_user_failure_after_retries_is_a_user_error():
    transport, _ = _transport([503, 503])
    user = LLMUser("http://user.test/v1", "m", client=httpx.Client(transport=transport), retries=1)
    user.start(GOAL)
    with pytest.raises(UserError, match="failed after 2 attempt"):
        user.reply("How can I help?")


def test_make_user_refuses_an_endpoint_without_url_or_model():
    with pytest.raises(ValueError, match="base_url"):
        make_user({"model": "m"})
