"""Eval run folders made by hand in the real format (``sample_record`` of real ``Episode`` records, ``summarize``,
``write_reports``), for the report's tests: fast, no model, and with the cases a report must show (tool calls
and their results, an invalid action, an env failure, hostile text)."""

import json
from pathlib import Path

from envgym.agents.evaluation.evaluate import sample_record, summarize
from envgym.agents.evaluation.report import write_reports
from envgym.agents.evaluation.suite import EnvEval
from envgym.episode import Episode, Turn

ENV = "math/Calculator-v0"
HOSTILE = "<script>document.title='pwned'</script><img src=x onerror=alert(1)>"


def calculator_episode(
    task: int, sample: int, correct: bool, *, error: str | None = None, answer_text: str | None = None
) -> Episode:
    """A two-turn episode: a JSON tool call and its result, then a boxed answer (``answer_text`` replaces it)."""
    call = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": f"call{task}",
                "type": "function",
                "function": {"name": "calc", "arguments": '{"expression": "6*7"}'},
            }
        ],
    }
    answer = answer_text or ("\\boxed{42}" if correct else "\\boxed{41}")
    turns = [
        Turn(
            action=call,
            observation=[{"role": "tool", "name": "calc", "tool_call_id": f"call{task}", "content": "42"}],
            reward=0.0,
            info={"tool_calls": 1, "finish_reason": "stop", "action_valid": True},
        ),
        Turn(
            action=answer,
            observation=[],
            reward=1.0 if correct else 0.0,
            terminated=True,
            reward_components={"correct": 1.0 if correct else 0.0},
            info={
                "correct": correct,
                "answer": "42" if correct else "41",
                "finish_reason": "stop",
                **({} if correct else {"action_valid": False, "action_error": "wrong value"}),
            },
        ),
    ]
    prompt = [{"role": "user", "content": f"Compute 6 * 7 (task {task})."}]
    return Episode(
        env_id=ENV,
        task_id=f"calc-{task}",
        prompt=prompt,
        turns=turns,
        metadata={"task_index": task, "sample_index": sample},
        error=error,
    )


def write_run(folder: Path, model: str, correct: dict[int, list[bool]], *, hostile: bool = False) -> Path:
    """A run folder of ``ENV`` whose task ``i`` has one sample per flag of ``correct[i]``; task 0's first answer is
    ``HOSTILE`` when ``hostile``; a last task whose only sample's env failed."""
    episodes = [
        calculator_episode(task, sample, flag, answer_text=HOSTILE if hostile and (task, sample) == (0, 0) else None)
        for task, flags in correct.items()
        for sample, flag in enumerate(flags)
    ]
    episodes.append(calculator_episode(len(correct), 0, False, error="sandbox infra_error"))
    records = [{**sample_record(episode), "setup": {"model": model}} for episode in episodes]
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "samples.jsonl").open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(record) + "\n" for record in records)
    config = EnvEval(env=ENV, num_generations=max(len(flags) for flags in correct.values()), n_tasks=len(correct) + 1)
    results = {"model": model, "envs": {ENV: summarize(config, records, 0.0)}, "elapsed_s": 0.0}
    (folder / "results.json").write_text(json.dumps(results))
    write_reports(results, folder)
    return folder
