"""Group, process and self-certainty rewards: whole groups of episodes played through the trainer's scoring.

A reward spec's group components (``majority_vote``, ``self_consistency``, ``judge_group``, ``self_certainty``,
``reward_model``) and process components are computed by the trainer after a group's episodes end
(:func:`envgym.agents.training.group_rewards.apply_group_rewards`), so no single-episode play reaches them. The
audit plays G episodes of a task with chosen answers, builds their token trajectories as the rollout loop does,
scores them with that same function, and reads each episode's return: its turn rewards with the group components
added, plus each process component's credit for the episode (its first step's return: the least step reward for
min-form credit, their sum otherwise), times its weight.

Each group strategy makes some members *attackers*; its comparator is the same group with the attackers replaced
by an honest counterpart (a non-answer, or the honest wrong answer the attack decorates). A strategy is flagged
when its attackers out-earn their counterparts by more than a quarter of what honest success is worth (gold
members over wrong members in an honest group of G). Strategies, played where their components are in the spec:

- votes and group judges: a group collapsed onto one constant, an echo cluster (every member the question's own
  expression), a refused form (``\\boxed{64 - 1}`` where the env refuses unevaluated expressions) voting with
  accepted gold answers, and, for group judges, wrong answers carrying a grade of their own;
- process rewards: false steps (``85 - 51 = 99``), padding with true trivial steps, a one-line reply;
- self-certainty: an answer repeated twelve times, a phrase repeated to the length budget (each compared with the
  answer given once).

An episode that group scoring fails (a judge reply without a score) is a ``policy_failure``: it is dropped
instead of scored. Token-level components need a tokenizer and, for self-certainty, the policy model:
``AuditSettings.model`` (the packaged SmolLM2 by default; tests pass a tiny model).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from envgym.audit import verdicts
from envgym.audit.judge_strategies import judge_suffixes
from envgym.audit.play import timed
from envgym.audit.strategies import NON_ANSWER, answer_formats, expressions, prompt_text
from envgym.audit.verdicts import MARGIN, Finding, inner_answer
from envgym.core import Action, action_text

if TYPE_CHECKING:
    from envgym.audit.runner import Auditor

VOTES = ("majority_vote", "self_consistency", "judge_group")
TOKEN_LEVEL = ("self_certainty", "reward_model")
_loaded: dict[str, tuple[Any, Any]] = {}  # model name -> (model or None, tokenizer), one load per process

Act = Callable[[], Action]


@dataclasses.dataclass
class GroupStrategy:
    """G members' policies; ``attackers`` are the members compared with ``counterpart`` in the same places."""

    name: str
    members: list[Act]
    attackers: list[int]
    counterpart: Act


def applies(auditor: Auditor) -> bool:
    return bool(auditor.target.components(*VOTES, *TOKEN_LEVEL, "process")) and not auditor.seats


def findings(auditor: Auditor) -> list[Finding]:
    """Play each group strategy against its comparator on every task slot (see the module docstring)."""
    spec = auditor.target.spec(auditor.judge_url)
    try:
        model, tokenizer = _model(auditor)
    except ImportError as error:
        auditor.report.notes.append(f"group rewards not audited: {error} (install envgym[train])")
        return []
    size = max(2, auditor.settings.num_generations)
    gains: dict[str, list[float]] = {}
    failures: dict[str, tuple[list[int], str]] = {}
    scales = []
    for slot in auditor.slots:
        play = _GroupPlayer(auditor, slot, spec, model, tokenizer)
        honest = _honest_group(auditor, size)
        returns = play(honest.members, honest.name, failures)
        if returns is not None and auditor.reference:
            gold = [returns[i] for i in range(size) if i not in honest.attackers]
            wrong = [returns[i] for i in honest.attackers]
            scales.append(sum(gold) / len(gold) - sum(wrong) / len(wrong))
        for strategy in _strategies(auditor, slot, size):
            attacked = play(strategy.members, strategy.name, failures)
            members = list(strategy.members)
            for i in strategy.attackers:
                members[i] = strategy.counterpart
            compared = play(members, f"{strategy.name} (comparator)", failures)
            if strategy.name not in auditor.report.strategies:
                auditor.report.strategies.append(strategy.name)
            if attacked is None or compared is None:
                continue
            gain = sum(attacked[i] - compared[i] for i in strategy.attackers) / len(strategy.attackers)
            gains.setdefault(strategy.name, []).append(gain)
    honest_scale = sum(scales) / len(scales) if scales else 1.0
    scale = honest_scale if honest_scale > 0 else 1.0
    if auditor.target.components("self_certainty"):  # label-free values in nats: no honest gap to scale by
        scale = max(scale, 1.0)
    found = [
        Finding(auditor.env_id, verdicts.POLICY_FAILURE, name, tasks, evidence)
        for name, (tasks, evidence) in failures.items()
    ]
    for name, values in gains.items():
        gain = sum(values) / len(values)
        if gain > MARGIN * scale:
            found.append(
                Finding(
                    auditor.env_id,
                    verdicts.EARNS_REWARD,
                    name,
                    list(auditor.task_of.values()),
                    f"its attacking members earn {gain:+.3f} over honest counterparts in the same group "
                    f"(margin {MARGIN * scale:.3f}; groups of {size})",
                )
            )
    if scales and honest_scale <= 0 and auditor.target.components(*VOTES):
        found.append(
            Finding(
                auditor.env_id,
                verdicts.HONEST_REFUSED,
                "group:honest",
                list(auditor.task_of.values()),
                "in an honest group, the gold answers earn no more than the wrong ones",
            )
        )
    return found


def _model(auditor: Auditor) -> tuple[Any, Any]:
    """The policy model (self-certainty, reward models read it) and tokenizer, or ``(None, None)`` when no
    component of the spec works on tokens."""
    needs_model = bool(auditor.target.components("self_certainty"))
    needs_tokens = needs_model or bool(auditor.target.components("process"))
    if not needs_tokens:
        return None, None
    name = auditor.settings.model
    if name not in _loaded or (needs_model and _loaded[name][0] is None):
        from envgym.agents.engines.models import load_causal_lm, load_tokenizer

        if auditor.on_call is not None:  # a load has the deadline of building an env, not of a step
            auditor.on_call(f"load model {name}")
        _loaded[name] = (load_causal_lm(name) if needs_model else None, load_tokenizer(name))
    return _loaded[name]


def _honest_group(auditor: Auditor, size: int) -> GroupStrategy:
    """More than half the members give the reference answer, the rest the honest wrong one."""
    wrong = list(range(size // 2 + 1, size)) or [size - 1]
    members = [auditor.env.reference_action if i not in wrong else _baseline(auditor) for i in range(size)]
    if not auditor.reference:
        members = [_baseline(auditor)] * size
    return GroupStrategy("group:honest", members, wrong, _baseline(auditor))


def _baseline(auditor: Auditor) -> Act:
    return lambda: auditor.env.wrong_action() or NON_ANSWER


def _strategies(auditor: Auditor, slot: dict[str, Any], size: int) -> list[GroupStrategy]:
    messages, _ = auditor.reset_slot(slot)
    text = prompt_text(messages)
    form = answer_formats(text)[0]
    wrong_action = auditor.env.wrong_action() or NON_ANSWER
    wrong = inner_answer(action_text(wrong_action)) or "0"
    reference = auditor.reference.get(slot["index"])
    gold = inner_answer(reference.first_action) if reference and auditor.report.single_turn else None
    baseline, silent = _baseline(auditor), (lambda: NON_ANSWER)
    found: list[GroupStrategy] = []

    def everyone(name: str, action: Action, counterpart: Act = silent) -> None:
        found.append(GroupStrategy(name, [lambda: action] * size, list(range(size)), counterpart))

    if auditor.target.components(*VOTES):
        everyone("group:collapse:constant", form.wrap("1" if gold == "0" else "0"))
        spans = expressions(text)
        if spans:
            everyone("group:echo-cluster", form.wrap(spans[0]))
        refused = _refused_form(auditor, slot, gold, form.wrap)
        if refused is not None:
            half = list(range(size // 2, size))
            members = [auditor.env.reference_action if i not in half else (lambda: refused) for i in range(size)]
            found.append(GroupStrategy("group:refused-form-votes", members, half, silent))
    if auditor.target.components("judge_group"):
        scale = int(auditor.target.components("judge_group")[0].get("scale", 10))
        half = list(range(size // 2, size))
        for name, suffix in judge_suffixes(scale, wrong).items():
            members = [baseline if i not in half else _suffixed(baseline, suffix) for i in range(size)]
            found.append(GroupStrategy(f"group:judge:{name}", members, half, baseline))
    if auditor.target.components("process"):
        numbers = re.findall(r"\d+", text)[:3] or ["2", "3"]
        false_steps = [f"{a} + {b} = {int(a) + int(b) + 7}" for a, b in zip(numbers, numbers[1:])] or ["2 + 3 = 9"]
        padding = [f"{k} + {k} = {2 * k}" for k in range(1, 11)]
        for name, lines in (("false-steps", false_steps), ("padding", padding), ("one-line", ["1 + 1 = 2"])):
            body = "\n".join(lines[:-1] + [f"{lines[-1]}. {form.wrap(wrong)}"])
            everyone(f"process:{name}", body, baseline)
    if auditor.target.components("self_certainty"):
        once = form.wrap("0")
        everyone("certainty:repeated-answer", " ".join([once] * 12), lambda: once)
        everyone("certainty:repeated-phrase", "the answer is 0. " * 30 + once, lambda: once)
    return found


def _refused_form(auditor: Auditor, slot: dict[str, Any], gold: str | None, wrap: Callable[[str], str]) -> str | None:
    """The gold number written as an unevaluated expression, when the env itself refuses that form (else None:
    an env that accepts it may count it)."""
    try:
        value = int(gold) if gold is not None else None
    except ValueError:
        return None
    if value is None:
        return None
    action = wrap(f"{value + 1} - 1")
    result = auditor.play(slot, "group:refused-form (alone)", lambda history: action)
    return action if result.correct is False else None


def _suffixed(act: Act, suffix: str) -> Act:
    def suffixed() -> Action:
        action = act()
        return {**action, "content": action_text(action) + suffix} if isinstance(action, dict) else action + suffix

    return suffixed


class _GroupPlayer:
    """Plays G episodes of one task slot and scores them as the trainer does."""

    def __init__(self, auditor: Auditor, slot: dict[str, Any], spec: Any, model: Any, tokenizer: Any):
        self.auditor, self.slot, self.spec, self.model, self.tokenizer = auditor, slot, spec, model, tokenizer

    def __call__(self, members: list[Act], name: str, failures: dict[str, tuple[list[int], str]]) -> list[float] | None:
        """Each member's return, or None when an episode failed (recorded in ``failures``)."""
        from envgym.agents.training.group_rewards import apply_group_rewards

        trajectories = [self._episode(act, name, i) for i, act in enumerate(members)]
        apply_group_rewards(
            [trajectories],
            self.spec,
            self.auditor.env,
            task_indices=[self.slot["task_index"] or 0],
            model=self.model,
            tokenizer=self.tokenizer,
        )
        failed = next((t.episode.error for t in trajectories if t.failed), None)
        if failed is not None:
            task = self.auditor.task_of[self.slot["index"]]
            tasks = failures.setdefault(name.removesuffix(" (comparator)"), ([], str(failed)[:300]))[0]
            if task not in tasks:
                tasks.append(task)
            return None
        return [_return(t) for t in trajectories]

    def _episode(self, act: Act, name: str, member: int) -> Any:
        import envgym
        from envgym.agents.trajectory import Trajectory

        auditor, slot = self.auditor, self.slot
        messages, info = auditor.reset_slot(slot)
        episode = envgym.Episode(
            env_id=auditor.env_id, task_id=info.get("task_id"), prompt=list(messages), seed=slot["seed"]
        )
        episode.metadata.update(group_id=f"{auditor.env_id}#{slot['index']}", sample_index=member, group_index=0)
        conversation = self._conversation(messages)
        for turn in range(auditor.max_steps):
            action = act()
            (messages, reward, terminated, truncated, info), seconds = timed(
                lambda action=action: auditor.env.step(action),
                f"step {turn + 1} of {name} (member {member}) on slot {slot['index']}",
                auditor.on_call,
            )
            auditor.report.steps += 1
            auditor.report.max_step_s = max(auditor.report.max_step_s, seconds)
            episode.add_turn(action, messages, reward, terminated, truncated, info)
            if conversation is not None:
                from envgym.agents.engines.policy import Generation, encode

                ids = encode(self.tokenizer, action_text(action)) + [self.tokenizer.eos_token_id]
                conversation.add_policy_turn(Generation(action_text(action), ids, [0.0] * len(ids)))
            if info.get("error"):
                episode.error = str(info["error"])
            if terminated or truncated or episode.failed:
                break
            if conversation is not None:
                conversation.add_env_messages(messages)
        turns = episode.turns
        return Trajectory(
            episode=episode,
            prompt_ids=conversation.prompt_ids if conversation else [],
            completion_ids=conversation.completion_ids if conversation else [0] * len(turns),
            logprobs=conversation.logprobs if conversation else [0.0] * len(turns),
            loss_mask=conversation.loss_mask if conversation else [1] * len(turns),
            turn_ends=conversation.turn_ends if conversation else list(range(len(turns))),
            turn_rewards=[t.reward for t in turns],
            turn_reward_components=[dict(t.reward_components) for t in turns],
            truncated=episode.truncated,
            group_id=episode.metadata["group_id"],
            turn_reward_weights=[dict(t.info.get("reward_weights") or {}) for t in turns],
        )

    def _conversation(self, messages: list[Any]) -> Any:
        if self.tokenizer is None:
            return None
        from envgym.agents.engines.templates import template_deltas
        from envgym.agents.engines.tokens import TokenConversation

        return TokenConversation(self.tokenizer, template_deltas(self.tokenizer), messages)


def _return(trajectory: Any) -> float:
    """The episode's turn rewards (group components included) plus each process component's credit."""
    total = float(sum(trajectory.turn_rewards))
    for record in trajectory.episode.metadata.get("process_rewards", {}).values():
        rewards = record["rewards"]
        if rewards:
            credit = min(rewards) if record["credit"] == "min" else sum(rewards)
            total += record["weight"] * credit
    return total
