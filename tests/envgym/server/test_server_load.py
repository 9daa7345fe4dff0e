"""Load: 256 concurrent sessions x 100 steps against one server. Every step is answered, every episode
runs to its end, and each session's trajectory is exactly what its own env gives in process (so no session
ever saw another's state)."""

from __future__ import annotations

import asyncio

import envgym
from envgym.remote import RemoteEnv
from envgym.server.launch import LocalServer

GUESS = "games/GuessNumber-v0"
SESSIONS, STEPS = 256, 100


def actions_for(session: int) -> tuple[list[str], list[tuple]]:
    """A script of guesses that never hits the session's secret (so the episode lasts all STEPS turns),
    and the trajectory the env gives for it in process."""
    local = envgym.make(GUESS, max_turns=STEPS)
    trajectory: list[tuple] = [local.reset(seed=session, options={"task_index": session})]
    secret = local.unwrapped.secret
    actions = []
    for turn in range(STEPS):
        guess = (session + 7 * turn) % 100 + 1
        actions.append(f"<guess>{guess + 1 if guess == secret else guess}</guess>")
        trajectory.append(local.step(actions[-1]))
    return actions, trajectory


async def play(url: str, session: int, actions: list[str]) -> list[tuple]:
    env = RemoteEnv(url, GUESS, max_turns=STEPS)
    trajectory: list[tuple] = [await env.areset(seed=session, options={"task_index": session})]
    for action in actions:
        trajectory.append(await env.astep(action))
    await env.aclose()
    return trajectory


async def test_256_concurrent_sessions_of_100_steps_each_are_all_answered_and_isolated():
    scripts = [actions_for(session) for session in range(SESSIONS)]
    with LocalServer(workers="process", num_workers=2, max_sessions=SESSIONS) as server:
        results = await asyncio.gather(*(play(server.url, i, actions) for i, (actions, _) in enumerate(scripts)))
    for session, (trajectory, (_, expected)) in enumerate(zip(results, scripts)):
        assert len(trajectory) == STEPS + 1, f"session {session} lost steps"
        assert trajectory[0][1]["task_id"] == f"guess-1-100-{session}"
        assert trajectory == expected, f"session {session} diverged from its own env"
        *middle, last = trajectory[1:]
        assert not any(t[2] or t[3] for t in middle) and last[3] is True, (
            f"session {session}'s episode did not end at turn {STEPS}"
        )
