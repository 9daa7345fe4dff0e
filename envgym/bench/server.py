"""`envgym bench server`: steps/s and step latency of one env server driven by N concurrent sessions over
loopback, next to the same env stepped in process. The same server, env and number of sessions are then
driven over the envgym protocol's WebSocket transport (``RemoteEnv(transport="websocket")``) and over the OpenEnv
protocol (``/openenv/{env_id}``, by OpenEnv's own client) where openenv is installed: ``server`` is the envgym
protocol's figures over HTTP, ``server_websocket`` over its WebSocket, ``openenv`` the OpenEnv protocol's.
``meets_target``: the envgym protocol reaches 3,500 steps/s on either transport.

The sessions are driven by ``--client-processes`` processes (default 2) because one Python HTTP client tops
out near the server's own rate; splitting the load keeps the number about the server, not the client.
"""

from __future__ import annotations

import os
import time
from typing import Any

import typer

from envgym.bench.report import emit, machine


def _percentiles(latencies: list[float]) -> dict[str, float]:
    import numpy as np

    if not latencies:
        return {"p50_ms": float("nan"), "p99_ms": float("nan")}
    p50, p99 = np.percentile(np.asarray(latencies) * 1000, [50, 99])
    return {"p50_ms": float(p50), "p99_ms": float(p99)}


def _process_tree_cpu_s(pid: int) -> float | None:
    """CPU seconds used so far by a process and its children (Linux ``/proc``; None elsewhere)."""
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    total, found = 0.0, False
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(entry) == pid or int(fields[1]) == pid:  # fields[1]: the parent pid
            total += (int(fields[11]) + int(fields[12])) / ticks
            found = True
    return total if found else None


def _drive(
    url: str, env_id: str, sessions: int, first_seed: int, action: str, seconds: float, protocol: str = "envgym"
) -> tuple[int, float, list[float], float]:
    """One client process: ``sessions`` concurrent sessions stepping for ``seconds``; returns (steps, elapsed
    seconds, step latencies, CPU seconds this client used while measuring). ``protocol``: ``envgym``
    (:class:`RemoteEnv` on the session API) or ``openenv`` (OpenEnv's own ``GenericEnvClient`` on the
    WebSocket at ``/openenv/{env_id}``)."""
    import asyncio
    import resource

    def cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    open_session, reset, step, close = _PROTOCOLS[protocol]()

    async def run() -> tuple[int, float, list[float]]:
        clients = [await open_session(url, env_id) for _ in range(sessions)]
        await asyncio.gather(*(reset(client, first_seed + i) for i, client in enumerate(clients)))
        await asyncio.gather(*(step(client, action) for client in clients))  # warm-up: connections, worker imports
        await asyncio.gather(*(reset(client, first_seed + i) for i, client in enumerate(clients)))
        latencies: list[float] = []
        start, cpu_start = time.perf_counter(), cpu()

        async def session(client: Any) -> None:
            while time.perf_counter() - start < seconds:
                sent = time.perf_counter()
                done = await step(client, action)
                latencies.append(time.perf_counter() - sent)
                if done:
                    await reset(client, None)

        await asyncio.gather(*(session(client) for client in clients))
        elapsed, cpu_used = time.perf_counter() - start, cpu() - cpu_start
        await asyncio.gather(*(close(client) for client in clients))
        return len(latencies), elapsed, latencies, cpu_used

    try:
        import uvloop

        return uvloop.run(run())
    except ImportError:
        return asyncio.run(run())


def _envgym_protocol(transport: str = "http") -> tuple:
    from envgym.remote import RemoteEnv

    async def open_session(url: str, env_id: str) -> Any:
        return RemoteEnv(url, env_id, transport=transport)

    async def reset(env: Any, seed: int | None) -> None:
        await env.areset(seed=seed)

    async def step(env: Any, action: str) -> bool:
        _, _, terminated, truncated, _ = await env.astep(action)
        return terminated or truncated

    async def close(env: Any) -> None:
        await env.aclose()

    return open_session, reset, step, close


def _openenv_protocol() -> tuple:
    from openenv.core import GenericEnvClient

    async def open_session(url: str, env_id: str) -> Any:
        client = GenericEnvClient(base_url=f"{url}/openenv/{env_id}")
        await client.connect()
        return client

    async def reset(client: Any, seed: int | None) -> None:
        await (client.reset(seed=seed) if seed is not None else client.reset())

    async def step(client: Any, action: str) -> bool:
        return (await client.step({"message": action})).done

    async def close(client: Any) -> None:
        await client.close()

    return open_session, reset, step, close


_PROTOCOLS = {
    "envgym": _envgym_protocol,
    "envgym-websocket": lambda: _envgym_protocol("websocket"),
    "openenv": _openenv_protocol,
}


def _measure(pool: Any, server: Any, jobs: list[tuple]) -> dict[str, Any]:
    """Run the client processes' jobs; steps/s, latency percentiles and CPU per step of client and server."""
    server_cpu_start = _process_tree_cpu_s(server.pid)
    results = pool.starmap(_drive, jobs)
    server_cpu_end = _process_tree_cpu_s(server.pid)
    steps = sum(r[0] for r in results)
    measured = {
        "steps_per_s": sum(r[0] / r[1] for r in results),
        **_percentiles([latency for r in results for latency in r[2]]),
        "steps": steps,
        "client_cpu_us_per_step": sum(r[3] for r in results) / steps * 1e6,
    }
    if server_cpu_start is not None and server_cpu_end is not None:
        # Includes session set-up and warm-up, so slightly over the steady state: a conservative figure.
        measured["server_cpu_us_per_step"] = (server_cpu_end - server_cpu_start) / steps * 1e6
        cpu_per_step = measured["server_cpu_us_per_step"] + measured["client_cpu_us_per_step"]
        # What this machine's cores sustain when nothing else runs on them (the measured rate drops on a
        # machine shared with other work; this one does not).
        measured["steps_per_s_on_idle_cores"] = (os.cpu_count() or 1) * 1e6 / cpu_per_step
    return measured


def _in_process(env_id: str, sessions: int, action: str, seconds: float) -> dict[str, float]:
    """The same envs stepped round-robin in this process: the cost without the network."""
    import envgym

    envs = [envgym.make(env_id) for _ in range(sessions)]
    for i, env in enumerate(envs):
        env.reset(seed=i)
    latencies: list[float] = []
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for env in envs:
            sent = time.perf_counter()
            _, _, terminated, truncated, _ = env.step(action)
            latencies.append(time.perf_counter() - sent)
            if terminated or truncated:
                env.reset()
    elapsed = time.perf_counter() - start
    return {"steps_per_s": len(latencies) / elapsed, **_percentiles(latencies)}


def bench_server(
    env_id: str = typer.Option("games/GuessNumber-v0", "--id", help="Env to serve and step."),
    sessions: int = typer.Option(64, help="Concurrent sessions."),
    action: str = typer.Option("<guess>50</guess>", help="The action every session plays each turn."),
    workers: str = typer.Option("process", help="Server workers: 'process' or 'thread'."),
    num_workers: int = typer.Option(None, help="Server worker count (default: the CPU count)."),
    client_processes: int = typer.Option(2, help="Processes that drive the sessions."),
    seconds: float = typer.Option(None, help="Seconds to measure (default: 5, or 1.5 with --quick)."),
    quick: bool = typer.Option(False, "--quick", help="A short measurement."),
    as_json: bool = typer.Option(False, "--json", help="Print only the JSON line."),
) -> None:
    """Env server throughput and latency with many concurrent sessions over loopback, vs in process."""
    import importlib.util
    import multiprocessing

    from envgym.server.launch import LocalServer

    seconds = seconds or (1.5 if quick else 5.0)
    client_processes = max(1, min(client_processes, sessions))
    shares = [sessions // client_processes + (i < sessions % client_processes) for i in range(client_processes)]
    with LocalServer(workers=workers, num_workers=num_workers, max_sessions=max(sessions, 1024)) as server:
        context = multiprocessing.get_context("spawn")
        with context.Pool(client_processes) as pool:
            jobs = [(server.url, env_id, share, sum(shares[:i]), action, seconds) for i, share in enumerate(shares)]
            over_network = _measure(pool, server, jobs)
            if importlib.util.find_spec("websockets") is None:
                over_socket: dict[str, Any] = {"skipped": "websockets is not installed (pip install 'envgym[server]')"}
            else:
                over_socket = _measure(pool, server, [(*job, "envgym-websocket") for job in jobs])
            if importlib.util.find_spec("openenv") is None:  # the peer client, measured where it is installed
                over_openenv: dict[str, Any] = {
                    "skipped": "openenv is not installed (pip install 'envgym[integrations]')"
                }
            else:
                over_openenv = _measure(pool, server, [(*job, "openenv") for job in jobs])
    over_network.update(workers=workers, client_processes=client_processes)
    result = {
        "bench": "server",
        "env_id": env_id,
        "sessions": sessions,
        "seconds": seconds,
        "server": over_network,
        "server_websocket": over_socket,
        "openenv": over_openenv,
        "in_process": _in_process(env_id, sessions, action, seconds),
        "target_steps_per_s": 3500,
        "meets_target": max(over_network["steps_per_s"], over_socket.get("steps_per_s", 0)) >= 3500,
        "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "machine": machine(),
    }
    emit(result, as_json)
