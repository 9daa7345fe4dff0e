"""Episode and Turn: JSON-serializable records of what happened, for evaluation, training and replay."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from envgym.core import Action, Message


@dataclasses.dataclass
class Turn:
    """One assistant turn and the env's answer to it."""

    action: Action
    observation: list[Message]
    reward: float
    terminated: bool = False
    truncated: bool = False
    reward_components: dict[str, float] = dataclasses.field(default_factory=dict)
    info: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Episode:
    """A whole episode: the prompt, the turns, and where it came from.

    ``metadata`` holds what the producer wants to keep (model name, sample index, group id, token counts).
    ``error`` is set when the env, verifier, sandbox or model request failed (the first step's
    ``info["error"]``, a step timeout, a failed request): such an episode says nothing about the policy, so
    trainers drop it and evals count it apart instead of scoring it as a reward of 0.
    """

    env_id: str | None
    task_id: str | None
    prompt: list[Message]
    turns: list[Turn] = dataclasses.field(default_factory=list)
    seed: int | None = None
    reset_info: dict[str, Any] = dataclasses.field(default_factory=dict)
    metadata: dict[str, Any] = dataclasses.field(default_factory=dict)
    error: str | None = None

    @property
    def failed(self) -> bool:
        """True when the episode ended on a failure that is not the policy's fault (see ``error``)."""
        return self.error is not None

    @property
    def total_reward(self) -> float:
        return float(sum(turn.reward for turn in self.turns))

    @property
    def rewards(self) -> list[float]:
        """Per-turn rewards, in order."""
        return [turn.reward for turn in self.turns]

    @property
    def num_turns(self) -> int:
        return len(self.turns)

    @property
    def terminated(self) -> bool:
        return bool(self.turns) and self.turns[-1].terminated

    @property
    def truncated(self) -> bool:
        return bool(self.turns) and self.turns[-1].truncated

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated

    def add_turn(
        self,
        action: Action,
        observation: list[Message],
        reward: float,
        terminated: bool,
        truncated: bool,
        info: dict[str, Any],
    ) -> Turn:
        """Record one ``env.step`` result (reward components are taken out of ``info``)."""
        info = dict(info)
        components = {k: float(v) for k, v in (info.pop("reward_components", None) or {}).items()}
        turn = Turn(action, observation, float(reward), bool(terminated), bool(truncated), components, info)
        self.turns.append(turn)
        return turn

    def messages(self) -> list[Message]:
        """The whole conversation as chat messages (prompt, then each action and the env's answer)."""
        out = [dict(m) for m in self.prompt]
        for turn in self.turns:
            out.append(
                {"role": "assistant", "content": turn.action} if isinstance(turn.action, str) else dict(turn.action)
            )
            out.extend(dict(m) for m in turn.observation)
        return out

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(dataclasses.asdict(self))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Episode:
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - fields
        if unknown:
            raise ValueError(f"unknown Episode fields {sorted(unknown)}; known fields are {sorted(fields)}")
        data = dict(data)
        data["turns"] = [Turn(**turn) for turn in data.get("turns", [])]
        return cls(**data)


def to_jsonable(value: Any) -> Any:
    """Recursively convert numpy scalars/arrays, tuples, sets and dataclasses into JSON-safe values.
    Non-finite floats become ``None`` (strict JSON has no NaN), anything else unknown becomes ``repr``."""
    if isinstance(value, (str, bool, int, type(None))):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable(dataclasses.asdict(value))
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return to_jsonable(value.tolist())
    return repr(value)


def write_jsonl(path: str | Path, episodes: Iterable[Episode], *, append: bool = False) -> int:
    """Write episodes one per line; returns how many were written. Each line is flushed as it is written,
    so an interrupted run keeps every finished episode."""
    count = 0
    with Path(path).open("a" if append else "w", encoding="utf-8") as handle:
        for episode in episodes:
            handle.write(json.dumps(episode.to_dict(), ensure_ascii=False) + "\n")
            handle.flush()
            count += 1
    return count


def read_jsonl(path: str | Path) -> Iterator[Episode]:
    """Read episodes written by :func:`write_jsonl`. A torn last line (a crash mid-write) is skipped;
    a bad line anywhere else raises with its line number."""
    path = Path(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as error:
            if number == len(lines):
                return
            raise ValueError(f"{path}:{number}: not valid JSON ({error.msg})") from None
        yield Episode.from_dict(data)
