"""``envgym export``: episodes of an eval or training run as SFT or rejection-sampling data.

Reads what the runs already write (``samples.jsonl`` of ``envgym eval``, ``rollouts.jsonl`` of ``envgym train
--save-rollouts``, or a JSONL file of :class:`~envgym.episode.Episode` records) and writes one row per episode:

- ``--chat`` (default): ``messages`` in OpenAI chat form (system/user/assistant/tool; an assistant's tool calls in
  ``tool_calls`` as ``{"id", "type": "function", "function": {"name", "arguments": "<json string>"}}``), with
  ``reward``, ``env_id``, ``task_id``, ``task_index`` and ``turn_rewards``: the ``messages`` column TRL's
  ``SFTTrainer`` reads.
- ``--tokens``: ``input_ids`` with a ``loss_mask`` (1 on the policy's tokens), per-turn rewards and the
  ``tokenizer`` the ids belong to, for records that carry the token ids (``prompt_ids``, ``completion_ids``,
  ``loss_mask``, ``turn_ends`` and ``tokenizer`` in the episode's metadata): ``envgym train --save-rollouts`` always
  keeps them, ``envgym eval --keep-tokens`` on request.

Episodes that failed (``error`` set: the env, verifier or model request broke) are never exported: their reward
says nothing about the policy. Light on purpose (no torch); pyarrow and datasets load only for their formats.

``--format inspect`` writes Inspect AI logs instead (one ``.eval`` per env, every episode with its transcript,
failed ones as errors; :mod:`envgym.integrations.inspect_ai_log`) for ``inspect view``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import typer

from envgym.agents.runs import TOKEN_KEYS, read_episodes
from envgym.episode import Episode

FORMATS = ("jsonl", "parquet", "hf-dataset", "inspect")


def export_command(
    run: Path = typer.Argument(..., help="An eval or train output folder, or a JSONL file of episodes."),
    format: str = typer.Option("jsonl", "--format", help=f"One of {', '.join(FORMATS)}."),
    min_reward: float = typer.Option(
        None, "--min-reward", help="Keep episodes whose total reward is >= this (rejection sampling)."
    ),
    best_per_task: bool = typer.Option(
        False, "--best-per-task", help="Keep only the highest-reward episode of each task."
    ),
    chat: bool = typer.Option(False, "--chat", help="Rows of chat messages for SFT (the default)."),
    tokens: bool = typer.Option(
        False,
        "--tokens",
        help="Rows of token ids, loss masks and per-turn rewards (runs of "
        "envgym train --save-rollouts or envgym eval --keep-tokens).",
    ),
    out: Path = typer.Option(
        None, "--out", help="Where to write (default: RUN's folder, export.<format> or export/ for hf-dataset)."
    ),
) -> None:
    """Export a run's episodes as chat messages (SFT) or token ids (with loss masks), filtered by reward."""
    try:
        if chat and tokens:
            raise ValueError("give --chat or --tokens, not both")
        if format not in FORMATS:
            raise ValueError(f"unknown --format {format!r}; use one of {', '.join(FORMATS)}")
        if format == "inspect":  # whole runs, not rows: every episode, its transcript and the run's metrics
            if min_reward is not None or best_per_task or tokens:
                raise ValueError(
                    "--format inspect writes every episode as chat: drop --min-reward, --best-per-task and --tokens"
                )
            _export_inspect(run, out)
            return
        episodes = read_episodes(run)
        kept = select(episodes, min_reward=min_reward, best_per_task=best_per_task)
        rows = [token_row(e, where) for where, e in kept] if tokens else [chat_row(e) for _, e in kept]
        target = out or default_output(run, format)
        write_rows(rows, target, format)
    except (ValueError, ImportError) as error:
        typer.echo(f"envgym export: {error}", err=True)
        raise typer.Exit(2) from None
    failed = sum(e.failed for _, e in episodes)
    typer.echo(
        f"wrote {len(rows)} of {len(episodes)} episodes to {target} "
        f"({failed} failed and {len(episodes) - failed - len(rows)} filtered out)"
    )


def select(
    episodes: Iterable[tuple[str, Episode]], *, min_reward: float | None = None, best_per_task: bool = False
) -> list[tuple[str, Episode]]:
    """The healthy episodes whose reward reaches ``min_reward``; with ``best_per_task`` only the first of the
    highest-reward ones of each (env, task id or, without one, seed)."""
    kept = [
        (where, e) for where, e in episodes if not e.failed and (min_reward is None or e.total_reward >= min_reward)
    ]
    if not best_per_task:
        return kept
    best: dict[tuple[Any, Any], tuple[str, Episode]] = {}
    for where, episode in kept:
        # an env without task ids tells its tasks apart by seed
        key = (episode.env_id, episode.task_id if episode.task_id is not None else episode.seed)
        if key not in best or episode.total_reward > best[key][1].total_reward:
            best[key] = (where, episode)
    return list(best.values())


def chat_row(episode: Episode) -> dict[str, Any]:
    """One SFT row: the conversation in OpenAI chat form and where it came from."""
    return {"messages": [_openai_message(m) for m in episode.messages()], **_about(episode)}


def token_row(episode: Episode, where: str = "episode") -> dict[str, Any]:
    """One row of token ids: ``input_ids`` (prompt then completion), ``loss_mask`` (0 on the prompt and on env
    tokens), ``turn_ends`` (completion offsets where each turn ends, when kept), per-turn rewards and the
    ``tokenizer`` (name or path) the ids belong to."""
    missing = [key for key in TOKEN_KEYS if not isinstance(episode.metadata.get(key), list)]
    if missing:
        raise ValueError(
            f"{where}: the episode carries no token ids (metadata lacks {', '.join(missing)}); "
            "run envgym eval with --keep-tokens (envgym train --save-rollouts keeps them), or export "
            "the text with --chat"
        )
    prompt, completion, mask = (episode.metadata[key] for key in TOKEN_KEYS)
    if len(mask) != len(completion):
        raise ValueError(f"{where}: loss_mask has {len(mask)} entries for {len(completion)} completion tokens")
    return {
        "input_ids": prompt + completion,
        "loss_mask": [0] * len(prompt) + mask,
        "prompt_length": len(prompt),
        "turn_ends": episode.metadata.get("turn_ends"),
        "tokenizer": episode.metadata.get("tokenizer"),
        **_about(episode),
    }


def _about(episode: Episode) -> dict[str, Any]:
    return {
        "reward": episode.total_reward,
        "turn_rewards": episode.rewards,
        "env_id": episode.env_id,
        "task_id": episode.task_id,
        "task_index": episode.metadata.get("task_index"),
    }


def _openai_message(message: dict[str, Any]) -> dict[str, Any]:
    """The message with its tool calls in OpenAI form: arguments as a JSON string, so every call has one shape
    (a column of parquet needs one type, and tools' argument dicts differ)."""
    message = dict(message)
    if message.get("tool_calls"):
        message["tool_calls"] = [_openai_call(call, i) for i, call in enumerate(message["tool_calls"])]
    return message


def _openai_call(call: dict[str, Any], index: int) -> dict[str, Any]:
    function = call.get("function", call)
    arguments = function.get("arguments", {})
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return {
        "id": str(call.get("id") or f"call_{index}"),
        "type": "function",
        "function": {"name": str(function.get("name")), "arguments": arguments},
    }


def default_output(run: str | Path, format: str) -> Path:
    """``export.jsonl``/``export.parquet``/``export/`` next to the run's records."""
    run = Path(run)
    folder = run if run.is_dir() else run.parent
    return folder / {"hf-dataset": "export", "inspect": "inspect-logs"}.get(format, f"export.{format}")


def _export_inspect(run: Path, out: Path | None) -> None:
    import importlib.util

    if importlib.util.find_spec("inspect_ai") is None:
        raise ImportError("--format inspect needs inspect-ai: pip install 'envgym[inspect]'")
    from envgym.integrations.inspect_ai_log import write_inspect_logs

    for path in write_inspect_logs(run, out or default_output(run, "inspect")):
        typer.echo(f"wrote {path} (see it with: inspect view --log-dir {path.parent})")


def write_rows(rows: list[dict[str, Any]], out: str | Path, format: str) -> None:
    """Write rows as JSONL, a parquet file (pyarrow) or a ``datasets`` folder (``Dataset.save_to_disk``)."""
    out = Path(out)
    if not rows:
        raise ValueError("no episode is left to export (all failed or filtered out); nothing written")
    out.parent.mkdir(parents=True, exist_ok=True)
    if format == "jsonl":
        with out.open("w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    elif format == "parquet":
        try:
            import pyarrow
            import pyarrow.parquet
        except ImportError:
            raise ImportError("this format needs pyarrow: pip install 'envgym[data]'") from None
        pyarrow.parquet.write_table(pyarrow.Table.from_pylist(rows), out)
    elif format == "hf-dataset":
        try:
            import datasets
        except ImportError:
            raise ImportError("this format needs datasets: pip install 'envgym[data]'") from None
        datasets.Dataset.from_list(rows).save_to_disk(str(out))
    else:
        raise ValueError(f"unknown format {format!r}; use one of {', '.join(FORMATS)}")
