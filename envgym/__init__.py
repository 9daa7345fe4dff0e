"""envgym: verifiable-reward, multi-turn text environments for RL on LLMs.

>>> import envgym
>>> env = envgym.make("games/GuessNumber-v0")
>>> messages, info = env.reset(seed=0)
>>> messages, reward, terminated, truncated, info = env.step("<guess>50</guess>")
"""

from envgym.core import (
    Action,
    Env,
    EnvGymError,
    InvalidAction,
    InvalidOptions,
    Message,
    ObservationWrapper,
    ResetNeeded,
    RewardRange,
    Task,
    TaskSource,
    Wrapper,
    action_text,
)
from envgym.episode import Episode, Turn, read_jsonl, write_jsonl
from envgym.multiagent import MultiAgentEnv, SeatTurn
from envgym.registration import EnvSpec, UnknownEnv, UnsafeEnv, list_envs, make, register, spec
from envgym.vector import VectorEnv, make_vec

__version__ = "0.1.0"


def __getattr__(name: str):
    """``envgym.RemoteEnv`` is imported on first use, so ``import envgym`` loads no HTTP client."""
    if name == "RemoteEnv":
        from envgym.remote import RemoteEnv

        return RemoteEnv
    raise AttributeError(f"module 'envgym' has no attribute {name!r}")


__all__ = [
    "Action",
    "Env",
    "EnvGymError",
    "EnvSpec",
    "Episode",
    "InvalidAction",
    "InvalidOptions",
    "Message",
    "MultiAgentEnv",
    "ObservationWrapper",
    "RemoteEnv",
    "ResetNeeded",
    "RewardRange",
    "SeatTurn",
    "Task",
    "TaskSource",
    "Turn",
    "UnknownEnv",
    "UnsafeEnv",
    "VectorEnv",
    "Wrapper",
    "action_text",
    "list_envs",
    "make",
    "make_vec",
    "read_jsonl",
    "register",
    "spec",
    "write_jsonl",
]
