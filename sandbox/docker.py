"""The ``docker`` backend: a pool of warm containers, one ``docker exec`` per job.

Each container runs with no network, memory/swap, pids and CPU limits, a read-only root with a tmpfs
``/tmp``, all capabilities dropped, ``no-new-privileges`` and the unprivileged ``sandbox`` user (uid
65534). A container runs one job at a time; after a violation (timeout, memory, output limit, a runner that
did not answer) it is removed and a fresh one takes its place. Images are built offline with
``envgym sandbox build-image`` (see :mod:`envgym.sandbox.images`). Supports ``python`` and ``bash``.
"""

from __future__ import annotations

import base64
import concurrent.futures
import json
import os
import queue
import threading
from pathlib import Path
from typing import Any

from envgym.sandbox.images import DEFAULT_TAG, SANDBOX_UID
from envgym.sandbox.result import ExecResult, infra_error

RUNNER = (
    Path(__file__).with_name("_verdict.py").read_text()
    + "\n"
    + Path(__file__).with_name("_docker_runner.py").read_text()
)
INIT = (
    "import os, time\nwhile True:\n    try:\n        os.wait()\n    except ChildProcessError:\n"
    "        time.sleep(0.05)"
)  # pid 1: reaps orphans
VIOLATIONS = ("timeout", "memory", "output_limit", "infra_error")
MAX_ARGUMENT_BYTES = 100_000  # one argv string; Linux allows 128 KiB


class DockerBackend:
    name = "docker"

    def __init__(
        self,
        image: str = DEFAULT_TAG,
        *,
        containers: int | None = None,
        memory_mb: int = 1024,
        pids_limit: int = 128,
        cpus: float = 1.0,
        tmpfs_mb: int = 256,
        max_output_bytes: int = 1 << 20,
    ):
        import docker

        try:
            self.client = docker.from_env()
            self.client.ping()
        except Exception as error:  # noqa: BLE001 - say what to do
            raise RuntimeError(
                f"the docker backend needs a running dockerd ({error}); start it "
                "(scripts/services.sh) or use backend='local'"
            ) from None
        try:
            self.client.images.get(image)
        except docker.errors.ImageNotFound:
            raise RuntimeError(
                f"docker image {image!r} not found: build it with `envgym sandbox build-image` (no registry is needed)"
            ) from None
        self.image, self.max_output_bytes = image, max_output_bytes
        self.run_options = {
            "network_mode": "none",
            "mem_limit": f"{memory_mb}m",
            "memswap_limit": f"{memory_mb}m",
            "pids_limit": pids_limit,
            "nano_cpus": int(cpus * 1e9),
            "read_only": True,
            "tmpfs": {"/tmp": f"rw,exec,size={tmpfs_mb}m,mode=1777"},
            "user": f"{SANDBOX_UID}:{SANDBOX_UID}",
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges"],
            "labels": {"envgym.sandbox": str(os.getpid())},
        }
        self.size = containers or len(os.sched_getaffinity(0))
        self._idle: queue.Queue = queue.Queue()
        self._all: set = set()
        self._lock = threading.Lock()
        for _ in range(self.size):
            self._idle.put(self._start_container())
        self._pool = concurrent.futures.ThreadPoolExecutor(self.size, thread_name_prefix="envgym-docker")

    def submit(self, request: dict[str, Any]) -> concurrent.futures.Future:
        if request["language"] not in ("python", "bash"):
            raise ValueError(
                f"the docker backend runs python and bash, not {request['language']!r}; use the local backend for c/cpp"
            )
        return self._pool.submit(self._run, request)

    def _run(self, request: dict[str, Any]) -> ExecResult:
        payload = base64.b64encode(json.dumps(request).encode()).decode()
        if len(payload) > MAX_ARGUMENT_BYTES:
            return infra_error(
                f"job too large for the docker backend ({len(payload)} bytes encoded, "
                f"limit {MAX_ARGUMENT_BYTES}); use the local backend",
                self.name,
            )
        container = self._idle.get()
        try:
            exit_code, output = container.exec_run(
                ["python3", "-c", RUNNER, payload, str(self.max_output_bytes)], user=str(SANDBOX_UID), workdir="/tmp"
            )
            lines = output.decode(errors="replace").strip().splitlines()
            if exit_code == 0 and lines:
                result = ExecResult.from_dict(json.loads(lines[-1]), self.name)
            elif exit_code == 137:  # the container's memory cgroup killed the runner with the job
                result = ExecResult("memory", -9, "", "killed by the container memory limit", 0.0, 0.0, self.name)
            else:
                result = infra_error(f"docker runner failed (exit {exit_code}): {output[-500:]!r}", self.name)
        except Exception as error:  # noqa: BLE001 - the sandbox failed, not the program
            result = infra_error(f"docker exec failed: {error!r}", self.name)
        if result.status in VIOLATIONS:
            self._replace(container)
        else:
            self._idle.put(container)
        return result

    def _start_container(self):
        container = self.client.containers.run(self.image, ["python3", "-c", INIT], detach=True, **self.run_options)
        with self._lock:
            self._all.add(container)
        return container

    def _replace(self, container) -> None:
        with self._lock:
            self._all.discard(container)
        try:
            container.remove(force=True)
        except Exception:  # noqa: BLE001 - already gone
            pass
        self._idle.put(self._start_container())

    def job_processes(self) -> list[str]:
        """Processes in the pool's containers besides their init (empty between jobs)."""
        leftovers = []
        with self._lock:
            containers = list(self._all)
        for container in containers:
            rows = container.top(ps_args="-eo pid,args")["Processes"] or []
            leftovers += [" ".join(row) for row in rows if "os.wait()" not in " ".join(row)]
        return leftovers

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "image": self.image,
            "containers": self.size,
            **{key: self.run_options[key] for key in ("network_mode", "mem_limit", "pids_limit", "read_only", "user")},
        }

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            containers, self._all = list(self._all), set()
        for container in containers:
            try:
                container.remove(force=True)
            except Exception:  # noqa: BLE001 - already gone
                pass
