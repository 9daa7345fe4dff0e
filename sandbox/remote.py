"""The ``remote`` backend: jobs go to an ``envgym serve sandbox`` server over HTTP (``POST /v1/run``).

The URL comes from ``url`` or ``ENVGYM_SANDBOX_URL`` and the bearer token from ``token`` or
``ENVGYM_SANDBOX_TOKEN``. Network failures and server errors come back as ``infra_error``, never as the
program's fault.
"""

from __future__ import annotations

import concurrent.futures
import os
from typing import Any

from envgym.sandbox.result import ExecResult, infra_error


class RemoteBackend:
    name = "remote"

    def __init__(
        self,
        url: str | None = None,
        *,
        token: str | None = None,
        max_in_flight: int = 64,
        client_timeout: float = 660.0,
    ):
        url = url or os.environ.get("ENVGYM_SANDBOX_URL")
        if not url:
            raise ValueError(
                "the remote sandbox needs a URL: pass url=... or set ENVGYM_SANDBOX_URL "
                "(start a server with `envgym serve sandbox`)"
            )
        import httpx

        token = token or os.environ.get("ENVGYM_SANDBOX_TOKEN")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.url = url.rstrip("/")
        self._client = httpx.Client(
            headers=headers, timeout=client_timeout, limits=httpx.Limits(max_connections=max_in_flight)
        )
        self._pool = concurrent.futures.ThreadPoolExecutor(max_in_flight, thread_name_prefix="envgym-remote")

    def submit(self, request: dict[str, Any]) -> concurrent.futures.Future:
        return self._pool.submit(self._run, request)

    def _run(self, request: dict[str, Any]) -> ExecResult:
        body = {key: value for key, value in request.items() if key != "id"}
        try:
            response = self._client.post(f"{self.url}/v1/run", json=body)
        except Exception as error:  # noqa: BLE001 - any transport failure is the sandbox's, not the program's
            return infra_error(f"remote sandbox at {self.url} unreachable: {error!r}", self.name)
        if response.status_code != 200:
            return infra_error(f"remote sandbox answered {response.status_code}: {response.text[:500]}", self.name)
        result = ExecResult.from_dict(response.json())
        result.backend = f"{self.name}:{result.backend}"
        return result

    def describe(self) -> dict[str, Any]:
        return {"backend": self.name, "url": self.url}

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._client.close()
