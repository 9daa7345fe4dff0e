"""``envgym export RUN --format inspect``: an ``envgym eval`` run as Inspect AI logs, so ``inspect view`` shows
envgym's transcripts.

One Inspect log (``.eval``, written by Inspect's own :func:`inspect_ai.log.write_eval_log`) per env of the run,
since an Inspect log holds one task. Each episode of ``samples.jsonl`` becomes a sample: its id is the task
index and its epoch the sample number (1-based), so the n samples of one task sit together; its messages are the
whole conversation (tool calls and tool results included); its score ``envgym_reward`` is the episode's reward
with the summed reward components, per-turn rewards, ``correct`` and how it ended in the metadata (the same
shape :mod:`envgym.integrations.inspect_ai`'s scorer gives); its transcript has, per turn, the model's
generation, the tool calls the env ran with their results, and an ``info`` event with the turn's reward,
components and flags. An episode that failed (``error`` set) is a sample with that error and no score, never a
reward of 0. ``results.json``'s numbers (pass@k, maj@k, mean reward, ...) become the log's metrics where the run
has one.
"""

from __future__ import annotations

import datetime
import json
import re
import uuid
from pathlib import Path
from typing import Any

from inspect_ai.event import Event, InfoEvent, ModelEvent, ToolEvent
from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalError,
    EvalLog,
    EvalMetric,
    EvalPlan,
    EvalPlanStep,
    EvalResults,
    EvalSample,
    EvalScore,
    EvalSpec,
    EvalStats,
    write_eval_log,
)
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput
from inspect_ai.scorer import Score

from envgym.agents.runs import RESULTS_FILE, RUN_FILES, read_episodes
from envgym.episode import Episode, to_jsonable
from envgym.integrations.inspect_ai import episode_summary, inspect_messages, tool_info

SCORER = "envgym_reward"


def write_inspect_logs(run: str | Path, out: str | Path) -> list[Path]:
    """Write one Inspect log per env of ``run`` (an ``envgym eval`` folder or a JSONL file of episodes) into the
    folder ``out``; returns their paths."""
    run, out = Path(run), Path(out)
    results = _results(run)
    by_env: dict[str, list[Episode]] = {}
    for _, episode in read_episodes(run):
        by_env.setdefault(episode.env_id or "unknown", []).append(episode)
    records = [run / name for name in RUN_FILES if (run / name).is_file()] if run.is_dir() else [run]
    created = datetime.datetime.fromtimestamp(max(path.stat().st_mtime for path in records), tz=datetime.timezone.utc)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for env_id, episodes in by_env.items():
        # the same run exported again overwrites its logs instead of adding copies to inspect view's list
        eval_id = uuid.uuid5(uuid.NAMESPACE_URL, f"{run.resolve()}#{env_id}").hex
        log = eval_log(env_id, episodes, results, created, eval_id)
        stamp = created.strftime("%Y-%m-%dT%H-%M-%S+00-00")  # Inspect's own log file naming
        path = out / f"{stamp}_{re.sub(r'[^A-Za-z0-9_.-]+', '-', env_id)}_{log.eval.eval_id}.eval"
        write_eval_log(log, path)
        paths.append(path)
    return paths


def eval_log(
    env_id: str, episodes: list[Episode], results: dict[str, Any], created: datetime.datetime, eval_id: str
) -> EvalLog:
    """The Inspect log of one env's episodes; ``results`` is the run's ``results.json`` (or ``{}``)."""
    summary = (results.get("envs") or {}).get(env_id) or {}
    config = summary.get("config") or {}
    model = str(
        results.get("model") or next((e.metadata["model"] for e in episodes if e.metadata.get("model")), "unknown")
    )
    samples = [eval_sample(e, position, model) for position, e in enumerate(episodes)]
    task_ids = sorted({s.id for s in samples}, key=str)
    scored = [s.scores[SCORER].value for s in samples if s.scores]
    metrics = {
        name: EvalMetric(name=name, value=float(value)) for name, value in summary.items() if _is_metric(name, value)
    }
    if not metrics and scored:
        metrics = {"mean": EvalMetric(name="mean", value=sum(scored) / len(scored))}
    stamp = created.isoformat()
    return EvalLog(
        status="success",
        eval=EvalSpec(
            eval_id=eval_id,
            run_id=eval_id,
            task_id=eval_id,
            created=stamp,
            task=f"envgym/{env_id}",
            model=model,
            task_args=to_jsonable(config.get("env_kwargs") or {}),
            dataset=EvalDataset(name=env_id, samples=len(task_ids), sample_ids=task_ids),
            config=EvalConfig(epochs=max((s.epoch for s in samples), default=1)),
            metadata={"source": "envgym eval", "envgym_config": to_jsonable(config)},
        ),
        plan=EvalPlan(name="envgym eval", steps=[EvalPlanStep(solver="envgym rollout", params={})]),
        results=EvalResults(
            total_samples=len(samples),
            completed_samples=len(scored),
            scores=[EvalScore(name=SCORER, scorer=SCORER, metrics=metrics)],
        ),
        stats=EvalStats(
            completed_at=stamp,
            started_at=(created - datetime.timedelta(seconds=float(summary.get("seconds") or 0))).isoformat(),
        ),
        samples=samples,
    )


def eval_sample(episode: Episode, position: int, model: str) -> EvalSample:
    """One episode as an Inspect sample (see the module docstring)."""
    task_index = episode.metadata.get("task_index")
    sample_id = task_index if task_index is not None else (episode.task_id or position)
    turns = [
        {
            "reward": t.reward,
            "reward_components": t.reward_components,
            "correct": t.info.get("correct"),
            "terminated": t.terminated,
            "truncated": t.truncated,
            "action_valid": t.info.get("action_valid", True),
            "action_error": t.info.get("action_error"),
        }
        for t in episode.turns
    ]
    ended_by = "terminated" if episode.terminated else "truncated" if episode.done else "not ended"
    messages = inspect_messages(episode.messages())
    last_text = next((m.text for m in reversed(messages) if m.role == "assistant"), "")
    scores = {}
    error = None
    if episode.failed:
        error = EvalError(message=str(episode.error), traceback="", traceback_ansi="")
    else:
        scores[SCORER] = Score(
            value=episode.total_reward, answer=_answer(episode) or last_text, metadata=episode_summary(turns, ended_by)
        )
    return EvalSample(
        id=sample_id,
        epoch=int(episode.metadata.get("sample_index") or 0) + 1,
        input=inspect_messages(episode.prompt),
        target="",
        messages=messages,  # the record keeps no gold answer
        output=ModelOutput.from_content(model, last_text),
        scores=scores,
        error=error,
        events=transcript(episode, messages, turns, model),
        metadata={
            "env_id": episode.env_id,
            "task_id": episode.task_id,
            "task_index": task_index,
            "seed": episode.seed,
            "turns": to_jsonable(turns),
            "episode_metadata": to_jsonable(episode.metadata),
        },
    )


def transcript(episode: Episode, messages: list[ChatMessage], turns: list[dict[str, Any]], model: str) -> list[Event]:
    """The episode as Inspect's transcript: per turn, the model's generation (with the conversation so far and
    the env's tools), each tool call the env ran with its result, then an ``info`` event with the turn's reward.
    ``messages`` is the episode's whole conversation (``Episode.messages``) in Inspect's form."""
    tools = [tool_info(schema) for schema in episode.reset_info.get("tools") or []]
    events: list[Event] = []
    position = len(episode.prompt)
    for number, (turn, summary) in enumerate(zip(episode.turns, turns), 1):
        assistant, observation = messages[position], messages[position + 1 : position + 1 + len(turn.observation)]
        events.append(
            ModelEvent(
                model=model,
                input=messages[:position],
                tools=tools,
                tool_choice="auto" if tools else "none",
                config=GenerateConfig(),
                output=ModelOutput.from_message(assistant),
            )
        )
        calls = {call.id: call for call in getattr(assistant, "tool_calls", None) or []}
        for message in observation:
            if message.role == "tool":
                call = calls.get(message.tool_call_id)
                events.append(
                    ToolEvent(
                        id=message.tool_call_id or "",
                        function=message.function or "",
                        arguments=call.arguments if call else {},
                        result=message.text,
                    )
                )
        events.append(InfoEvent(source=f"envgym turn {number}", data=to_jsonable(summary)))
        position += 1 + len(observation)
    return events


def _results(run: Path) -> dict[str, Any]:
    path = run / RESULTS_FILE if run.is_dir() else run.parent / RESULTS_FILE
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not JSON ({error}); it should be the results.json envgym eval wrote") from None


def _is_metric(name: str, value: Any) -> bool:
    """results.json's per-env numbers that are metrics (pass@k, maj@k, mean_reward, rates), not counts."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and not name.startswith(("n_", "seconds"))


def _answer(episode: Episode) -> str | None:
    """The answer the env read from the model's last graded turn, if it reported one."""
    answers = [t.info["answer"] for t in episode.turns if t.info.get("answer") is not None]
    return str(answers[-1]) if answers else None
