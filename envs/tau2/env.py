"""tau2/airline-v0, tau2/retail-v0, tau2/telecom-v0: τ²-bench's customer-service domains as envs.

The agent serves a simulated customer under the domain's policy (its system prompt, τ²'s own wording) with the
domain's tools (OpenAI schemas in ``info["tools"]``, for the chat template). Every episode opens a fresh copy of
the domain's database from the installed ``tau2`` package and sets it to the task's initial state as τ²'s
orchestrator does; calls run through τ²'s own ``Environment.get_response``.

An episode, as in τ²: the agent greets the user (``Hi! How can I help you today?``) and the user answers; those
two messages end the reset's prompt. Each step is one agent turn:

- a turn with tool calls runs them; the results come back as ``tool`` messages (at most
  ``max_calls_per_turn``; calls that cannot be read, and a ``calculate`` call with ``**``, which would let a
  policy stall the process, are answered with an error and not run);
- a turn without calls is a message to the user, whose reply is the next ``user`` message. The user may first
  act on its own device (telecom): the env runs its calls and hands it the results; the agent sees none of it.

The episode ends as τ²'s does: ``terminated`` when the user says ``###STOP###``, ``###TRANSFER###`` (it was
handed to a human agent) or ``###OUT-OF-SCOPE###``, when ``max_errors`` calls failed (the agent's and the user's,
as τ² counts them; reward 0), and in solo mode when the agent calls ``done`` (or writes text, which τ² counts as an
agent error: reward 0);
``truncated`` when τ²'s step budget ``max_steps`` (messages of the agent, the user and the tools) is spent
(reward 0), or when the user's endpoint fails (``info["error"]``, not a score).

Reward, on the last turn: component ``tau2``, τ²'s reward for the episode (:mod:`envgym.envs.tau2.grading`);
``info["correct"]`` is τ²'s success (reward 1), the field pass^k counts. With a ``judge`` endpoint, component
``nl_assertions`` is τ²'s natural-language-assertion check (:mod:`envgym.envs.tau2.judge`), reported apart: τ²'s
leaderboard reward leaves it out. ``info["termination"]`` names τ²'s termination reason.

The user: ``user_endpoint`` (any OpenAI-compatible endpoint) plays it from τ²'s user prompt (its guidelines and the
task's scenario, with the user's tools in telecom); by default a :class:`~envgym.users.ReplayUser` plays the task's
gold user side (:mod:`envgym.envs.tau2.replay`), for tests and audits only: it says what the gold needs, so it
measures nothing about an agent.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

import numpy as np
from tau2.data_model.message import AssistantMessage, UserMessage
from tau2.data_model.message import Message as Tau2Message
from tau2.data_model.message import ToolCall as Tau2ToolCall
from tau2.data_model.simulation import SimulationRun, TerminationReason
from tau2.data_model.tasks import Task as Tau2Task
from tau2.environment.environment import Environment
from tau2.user.base import OUT_OF_SCOPE, STOP, TRANSFER
from tau2.utils.utils import get_now

from envgym.core import Action, Env, Message, StepResult, Task, action_text
from envgym.envs.tau2 import domains, grading, prompts
from envgym.envs.tau2.judge import AssertionJudge
from envgym.envs.tau2.replay import Plan, asks_for
from envgym.tools import ToolCall, parse_turn
from envgym.users import EndpointError, ReplayUser, User, UserBrief, UserError, UserTurn, make_user

USER_STOP_TOKENS = (STOP, TRANSFER, OUT_OF_SCOPE)


class Tau2Tasks:
    """A τ² split as a task source; each task's prompt is the agent's system prompt (built when asked for, since
    telecom's 2,285 solo prompts would each hold the 40 KB policy)."""

    def __init__(self, domain: str, split: str, solo: bool):
        self.domain, self.solo = domain, solo
        self.items = domains.tasks(domain, split)
        self.policy = domains.policy(domain, solo)

    def __len__(self) -> int:
        return len(self.items)

    def get(self, index: int) -> Task:
        task = self.items[index]
        system = prompts.agent_prompt(self.policy, solo=self.solo, ticket=task.ticket)
        return Task(
            id=f"{self.domain}/{task.id}",
            messages=[{"role": "system", "content": system}],
            answer=task,
            metadata={"domain": self.domain, "tau2_id": task.id},
        )

    def sample(self, rng: np.random.Generator) -> Task:
        return self.get(int(rng.integers(len(self.items))))


class Tau2Env(Env):
    """A τ²-bench domain as an env (module docstring).

    domain: ``airline``, ``retail`` or ``telecom``. split: one of τ²'s task splits (``base``, the leaderboard's,
        by default; telecom also has ``small`` and ``full``, its 2,285 tasks).
    solo: τ²'s solo mode (telecom only): no user; the agent gets the ticket, its tools and the user's, and ``done``.
    user_endpoint: keywords of :class:`~envgym.users.LLMUser` (``base_url``, ``model``, ``timeout``, ...) for a
        model user; user: a :class:`~envgym.users.User` to play it instead. Neither: the gold replay user.
    judge: keywords of :class:`~envgym.envs.tau2.judge.AssertionJudge` (``base_url``, ``model``, ...) to judge the
        natural-language assertions as a separate reward component.
    max_steps, max_errors: τ²'s limits (its defaults). max_calls_per_turn: calls run per agent turn.
    """

    description = "A tau2-bench customer-service domain: policy, tools over its database, a simulated user."

    def __init__(
        self,
        *,
        domain: str,
        split: str = "base",
        solo: bool = False,
        user_endpoint: dict[str, Any] | None = None,
        user: User | None = None,
        judge: dict[str, Any] | None = None,
        max_steps: int = 200,
        max_errors: int = 10,
        max_calls_per_turn: int = 16,
    ):
        if solo and domain not in domains.SOLO_DOMAINS:
            raise ValueError(f"tau2 has a solo mode for {', '.join(domains.SOLO_DOMAINS)} only, not for {domain!r}")
        if user is not None and user_endpoint is not None:
            raise ValueError("give user_endpoint (a model user) or user (a User instance), not both")
        if min(max_steps, max_errors, max_calls_per_turn) < 1:
            raise ValueError(
                f"max_steps, max_errors and max_calls_per_turn must be >= 1, got {max_steps}, {max_errors}, "
                f"{max_calls_per_turn}"
            )
        self.domain, self.solo = domain, solo
        self.tasks = Tau2Tasks(domain, split, solo)
        self.max_steps, self.max_errors, self.max_calls_per_turn = max_steps, max_errors, max_calls_per_turn
        self.tool_schemas = domains.agent_tools(domain, solo)
        self.user_tool_schemas = [] if solo else domains.user_tools(domain)
        user_tool_names = [schema["function"]["name"] for schema in self.user_tool_schemas]
        endpoint = None if user_endpoint is None else {"stop_tokens": USER_STOP_TOKENS, **user_endpoint}
        self.user = user or make_user(endpoint, default=lambda: ReplayUser(asks=asks_for(user_tool_names), patience=3))
        self.judge = None if judge is None else AssertionJudge(**judge)
        self._environment: Environment | None = None
        self.trajectory: list[Tau2Message] = []

    # --- episode ---------------------------------------------------------------------------------
    def _reset(self, task: Task | None, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        if not isinstance(task.answer, Tau2Task):
            raise ValueError(f"a tau2 task's answer is a tau2 Task; task {task.id!r} has {type(task.answer).__name__}")
        self._tau2_task = task.answer
        self._plan = Plan.of(self._tau2_task)
        self._environment = None  # built on first use: an episode without calls never loads a database
        self.trajectory, self._steps, self._errors = [], 0, 0
        self._termination: TerminationReason | None = None
        self._ended_early: TerminationReason | None = None
        info: dict[str, Any] = {"tools": copy.deepcopy(self.tool_schemas), "domain": self.domain}
        if self.solo:
            return task.prompt(), info
        self._record(AssistantMessage(role="assistant", content=prompts.GREETING))
        scenario = str(self._tau2_task.user_scenario)
        self.user.start(
            UserBrief(
                goal=(self._plan.opening,),
                prompt=prompts.user_prompt(scenario, with_tools=bool(self.user_tool_schemas)),
                tools=tuple(self.user_tool_schemas),
                script=self._plan.user_script(),
            )
        )
        turn = self._user_turn(prompts.GREETING)
        if isinstance(turn, TerminationReason):
            self._ended_early = turn
        elif turn.stop:
            self._ended_early = TerminationReason.USER_STOP
        opening = turn.text if isinstance(turn, UserTurn) else ""
        greeting = {"role": "assistant", "content": prompts.GREETING}
        return [*task.prompt(), greeting, {"role": "user", "content": opening}], info

    def _step(self, action: Action) -> StepResult:
        if self._ended_early is not None:  # the user's first turn ended it: nothing the agent says is heard
            return self._finish(self._ended_early, [])
        try:
            parsed = parse_turn(action)
        except (ValueError, RecursionError) as error:  # a JSON number too long for int(), JSON nested too deep
            self._errors += 1
            problem = f"the tool calls could not be read ({str(error)[:200]})"
            return self._after_turn([{"role": "user", "content": f"Error: {problem}."}], problem)
        if parsed.calls:
            return self._agent_calls(action, parsed.calls)
        text = action_text(action)
        if not text.strip():
            problem = "the message is empty: write to the user or call a tool"
            return self._after_turn([{"role": "user", "content": f"Error: {problem}."}], problem)
        self._record(AssistantMessage(role="assistant", content=text))
        self._steps += 1
        if self.solo:  # τ²'s solo agent may only call tools; text ends the episode, as a stop or an error
            return self._finish(TerminationReason.AGENT_STOP if STOP in text else TerminationReason.AGENT_ERROR, [])
        if self._steps >= self.max_steps:
            return self._finish(TerminationReason.MAX_STEPS, [])
        try:
            turn = self._user_turn(text)
        except UserError as error:
            return [], 0.0, False, True, {"error": str(error), "reward_components": {}}
        if isinstance(turn, TerminationReason):
            return self._finish(turn, [])
        reply = [{"role": "user", "content": turn.text}]
        if turn.stop:
            return self._finish(TerminationReason.USER_STOP, reply)
        return self._after_turn(reply, None)

    def _agent_calls(self, action: Action, calls: list[ToolCall]) -> StepResult:
        if self.solo and any(call.name == "done" for call in calls):
            # τ²'s solo agent turns a `done` call into its stop message; other calls in that message do not run.
            self._record(AssistantMessage(role="assistant", content=STOP))
            self._steps += 1
            return self._finish(TerminationReason.AGENT_STOP, [])
        run, skipped = calls[: self.max_calls_per_turn], calls[self.max_calls_per_turn :]
        # Calls read from text keep their text out of the record: τ² sees a tool-call message's content only when
        # it is separate from the calls (an OpenAI message), and that content counts as said to the user.
        content = action.get("content") if isinstance(action, dict) and action.get("tool_calls") else None
        results, failed = self._tool_round(run, "assistant", content if isinstance(content, str) else None)
        self._steps += 1
        problems = []
        if skipped:
            self._errors += 1
            results.append(
                {
                    "role": "tool",
                    "tool_call_id": skipped[0].id,
                    "name": skipped[0].name,
                    "content": f"Skipped: at most {self.max_calls_per_turn} tool calls run per turn; "
                    f"{len(skipped)} more did not.",
                }
            )
            problems.append(f"{len(calls)} tool calls in one turn; at most {self.max_calls_per_turn} run")
        if failed:
            problems.append(f"{failed} tool call(s) failed; the results say why")
        return self._after_turn(results, "; ".join(problems) or None, calls=len(run))

    def _after_turn(self, messages: list[Message], problem: str | None, calls: int = 0) -> StepResult:
        """The end of a turn the episode goes on from, unless τ²'s error or step budget is spent."""
        if self._errors >= self.max_errors:
            return self._finish(TerminationReason.TOO_MANY_ERRORS, messages)
        if self._steps >= self.max_steps:
            return self._finish(TerminationReason.MAX_STEPS, messages)
        info: dict[str, Any] = {
            "reward_components": {},
            "action_valid": problem is None,
            "tool_calls": calls,
            "tool_errors": self._errors,
        }
        if problem is not None:
            info["action_error"] = problem
        return messages, 0.0, False, False, info

    # --- the user and the tools --------------------------------------------------------------------
    def _user_turn(self, agent_text: str) -> UserTurn | TerminationReason:
        """The user's answer, after any calls it makes on its side; τ²'s ending instead when its error or step
        budget runs out first (τ² counts the user's failing calls too)."""
        turn = self.user.reply(agent_text)
        while turn.tool_calls:
            results, _ = self._tool_round(list(turn.tool_calls), "user", turn.text or None)
            self._steps += 1
            if self._errors >= self.max_errors:
                return TerminationReason.TOO_MANY_ERRORS
            if self._steps >= self.max_steps:
                return TerminationReason.MAX_STEPS
            turn = self.user.tool_results(results)
        said = turn.text
        if turn.stop and turn.stop_token and turn.stop_token not in said:
            said = f"{said} {turn.stop_token}"
        self._record(UserMessage(role="user", content=said))
        self._steps += 1
        return turn

    def _tool_round(self, calls: list[ToolCall], requestor: str, content: str | None) -> tuple[list[Message], int]:
        """Run ``calls`` through τ²'s environment for ``requestor`` and record what τ² would record; returns the
        ``tool`` messages (one per call, run or refused) and how many failed."""
        refusals = [refusal(call) for call in calls]
        runnable = [call for call, refused in zip(calls, refusals) if refused is None]
        tau2_calls = [Tau2ToolCall(id=c.id, name=c.name, arguments=c.arguments, requestor=requestor) for c in runnable]
        if tau2_calls:
            speaker = AssistantMessage if requestor == "assistant" else UserMessage
            self._record(speaker(role=requestor, content=content, tool_calls=tau2_calls))
        responses = iter([self.environment.get_response(call) for call in tau2_calls])
        results, failed = [], 0
        for call, refused in zip(calls, refusals):
            if refused is not None:
                failed, text = failed + 1, f"Error: {refused}"
            else:
                response = next(responses)
                self._record(response)
                failed, text = failed + response.error, response.content or ""
            results.append({"role": "tool", "tool_call_id": call.id, "name": call.name, "content": text})
        if tau2_calls:
            self._steps += 1
        self._errors += failed
        return results, failed

    @property
    def environment(self) -> Environment:
        """The episode's τ² environment, set to the task's initial state on first use."""
        if self._environment is None:
            self._environment = grading.initial_environment(self.domain, self._tau2_task, self.solo)
        return self._environment

    def _record(self, message: Tau2Message) -> None:
        self.trajectory.append(message)

    # --- the end -----------------------------------------------------------------------------------
    def _finish(self, termination: TerminationReason, messages: list[Message]) -> StepResult:
        self._termination = termination
        result = grading.grade(
            self.domain, self._tau2_task, self.trajectory, self._environment, termination, solo=self.solo
        )
        components = {"tau2": result.reward}
        info: dict[str, Any] = {
            "reward_components": components,
            "correct": result.reward == 1.0,
            "termination": termination.value,
            "tau2_breakdown": result.breakdown,
            "tau2_checks": result.checks,
        }
        if result.note:
            info["tau2_note"] = result.note
        if self.judge is not None:
            try:
                components["nl_assertions"], info["nl_assertions"] = self._judged(termination)
            except EndpointError as error:
                return messages, 0.0, False, True, {"error": str(error), "reward_components": {}}
        truncated = termination == TerminationReason.MAX_STEPS
        return messages, sum(components.values()), not truncated, truncated, info

    def _judged(self, termination: TerminationReason) -> tuple[float, list[dict[str, Any]]]:
        """τ²'s NL-assertion reward: 1 when every assertion is met (or there are none), 0 for an episode τ² does
        not grade."""
        if termination not in grading.GRADED_ENDINGS:
            return 0.0, []
        criteria = self._tau2_task.evaluation_criteria
        assertions = list(criteria.nl_assertions or []) if criteria is not None else []
        if not assertions:
            return 1.0, []
        verdicts = self.judge.judge(self.trajectory, assertions)
        return float(all(verdict["met"] for verdict in verdicts)), verdicts

    def to_simulation(self) -> SimulationRun:
        """The finished episode as τ²'s ``SimulationRun`` (for τ²'s own evaluator and viewers)."""
        if self._termination is None:
            raise ValueError("the episode has not ended yet; to_simulation() describes a finished episode")
        now = get_now()
        return SimulationRun(
            id=str(uuid.uuid4()),
            task_id=self._tau2_task.id,
            start_time=now,
            end_time=now,
            duration=0.0,
            termination_reason=self._termination,
            messages=[message.model_copy(deep=True) for message in self.trajectory],
        )

    # --- honest plays for audits and tests ---------------------------------------------------------
    def reference_action(self) -> Action | None:
        """The task's gold plan, played from where the episode is (:mod:`envgym.envs.tau2.replay`)."""
        if self.task is None:
            return None
        done = self._plan.progress(self.trajectory)
        return self._plan.next_action(done, solo=self.solo, max_calls=self.max_calls_per_turn)


def refusal(call: ToolCall) -> str | None:
    """Why ``call`` is answered with an error instead of run, or ``None`` to run it."""
    if call.error is not None:
        return call.error
    expression = call.arguments.get("expression")
    if call.name == "calculate" and isinstance(expression, str) and "**" in expression:
        # τ²'s calculator evals its input after a character check that lets `**` through: `9**9**9**9` would
        # hold the process for ever. Its description offers +, -, *, / only.
        return "calculate: '**' is not an operator of this calculator; use +, -, *, / and parentheses"
    return None
