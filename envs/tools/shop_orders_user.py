"""tools/ShopOrdersUser-v0: tools/ShopOrders-v0 with a simulated user who reveals the requests over turns.

The first user message is vague; each request comes out only when the agent asks for it (see
:mod:`envgym.users`). A turn with tool calls runs them on the shop; a turn without is a message to the user,
whose reply is the next ``user`` message. The episode ends, and the goal-state check of ShopOrders decides the
reward, when the agent calls the ``done`` tool or when the user ends the conversation (the scripted user: a
final message without a question once every request is out). A failed user turn is ``info["error"]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from envgym.core import Action, Message, StepResult, Task, action_text
from envgym.envs.tools.orders import ShopOrders, ShopWorld
from envgym.envs.tools.shop import Shop, _cancel_goal, _move_goal, _order_goal, _replay, generate_world, open_world
from envgym.tools import Tool, ToolCall, parse_turn
from envgym.users import UserBrief, UserError, make_user

SYSTEM_PROMPT = (
    "You are a customer-service agent for an online shop. The customer will not say everything at once: ask "
    "what they need (a message without a tool call goes to the customer), then carry out each request with the "
    "tools. Change nothing you were not asked to change. When everything is done, call the done tool or send a "
    "final message without a question."
)
OPENING = "Hi, I need some help with a few things on the shop."
QUESTION = "What else can I help you with?"


class UserShopWorld(ShopWorld):
    """ShopWorld whose tasks keep the requests apart (each with its own solution calls) for the user."""

    def _make_task(self, rng: np.random.Generator, index: int) -> Task:
        goals = int(rng.integers(self.goals[0], self.goals[1] + 1))
        for _ in range(100):
            world = generate_world(rng)
            shop = Shop(open_world(world))
            requests = []
            for customer_id in (int(c) for c in rng.permutation([row[0] for row in world["customers"]])):
                made = (_cancel_goal, _move_goal, _order_goal)[int(rng.integers(3))](rng, shop, world, customer_id)
                if made is not None:
                    requests.append({"text": made[0], "solution": made[1]})
                    _replay(shop, made[1])
                if len(requests) == goals:
                    shop.db.close()
                    solution = [call for request in requests for call in request["solution"]]
                    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": OPENING}]
                    return Task(
                        id=f"shop-user-{index}",
                        messages=messages,
                        answer={"world": world, "solution": solution, "requests": requests},
                        metadata={"goals": goals},
                    )
            shop.db.close()
        raise RuntimeError(f"could not draw a shop task with {goals} goals")


class ShopOrdersUser(ShopOrders):
    """ShopOrders with a simulated user (module docstring).

    user_endpoint: ``None`` for the scripted user, or :class:`~envgym.users.LLMUser` keywords (``base_url``,
    ``model``, ``timeout``, ``retries``, ...) for a model playing the user.
    """

    description = "Customer service on a SQLite shop with a simulated user who reveals the requests over turns."

    def __init__(
        self, *, goals: tuple[int, int] = (1, 2), user_endpoint: dict[str, Any] | None = None, **tool_options: Any
    ):
        world = UserShopWorld(goals)
        tool_options.setdefault("prompt_format", "json")
        tool_options.setdefault("answer_format", None)
        tool_options.setdefault("max_calls_per_turn", 8)
        done = Tool(
            name="done",
            description="End the conversation once every request is carried out.",
            parameters={"type": "object", "properties": {}, "required": [], "additionalProperties": False},
            function=self._done,
        )
        self.user = make_user(user_endpoint)
        super(ShopOrders, self).__init__(world, [*world.tools(), done], **tool_options)

    def _done(self) -> str:
        self._finished = True
        return "Conversation closed."

    def _reset(self, task: Task | None, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        messages, info = super()._reset(task, options)
        self._finished = False
        self.user.start(UserBrief(goal=tuple(request["text"] for request in self.task_answer(task)["requests"])))
        self._revealed = 0
        return messages, info

    def task_answer(self, task: Task | None) -> dict[str, Any]:
        """The answer of ``task``, or of the task the inner judge drew when none was given."""
        return (task or self.env.task).answer

    def reference_action(self) -> Action | None:
        """Solve the requests revealed so far, then ask for the next one, then send the final message."""
        if self.task is None:
            return None
        requests = self.task.answer["requests"]
        needed = sum(len(request["solution"]) for request in requests[: self._revealed])
        if self._solution_done < needed:
            solution = self.task.answer["solution"][self._solution_done : needed][: self.max_calls_per_turn]
            calls = [
                ToolCall(call["name"], call["arguments"], f"ref_{self._solution_done + i}", "openai").to_openai()
                for i, call in enumerate(solution)
            ]
            return {"role": "assistant", "content": None, "tool_calls": calls}
        return QUESTION if self._revealed < len(requests) else "Every request is carried out."

    def wrong_action(self) -> Action | None:
        """An honest wrong play: close the conversation at once, with nothing done."""
        call = ToolCall("done", {}, "wrong_0", "openai").to_openai()
        return {"role": "assistant", "content": None, "tool_calls": [call]}

    def _step(self, action: Action) -> StepResult:
        try:
            parsed = parse_turn(
                action, self._tag_arguments.keys(), tag_arguments=self._tag_arguments, formats=self.call_formats
            )
        except (ValueError, RecursionError):
            return super()._step(action)  # ToolEnv answers an unreadable turn
        if parsed.calls and not parsed.answer_first:
            messages, reward, _, _, info = self._tool_turn(parsed.calls)
            if not self._finished:
                return messages, reward, False, False, info
            verdict, judged, terminated, truncated, judge_info = self.env.step(action)
            info.update({key: value for key, value in judge_info.items() if key != "reward_components"})
            info["reward_components"] = {**info["reward_components"], **judge_info["reward_components"]}
            return messages + verdict, reward + judged, terminated, truncated, info
        text = action_text(action)
        try:
            turn = self.user.reply(text)
        except UserError as error:
            info = {"error": str(error), "reward_components": {}, **self._counts_info(0)}
            return [], 0.0, False, True, info
        if turn.stop:
            return super()._step(action)  # the inner judge grades the final state
        if self._revealed < len(self.task.answer["requests"]) and "?" in text:
            self._revealed += 1
        info = {"reward_components": {"tool_cost": 0.0}, "action_valid": True, **self._counts_info(0)}
        return [{"role": "user", "content": turn.text}], 0.0, False, False, info
