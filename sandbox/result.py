"""What every backend takes (a checked request) and gives back (an :class:`ExecResult`)."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping
from typing import Any

STATUSES = ("ok", "error", "timeout", "memory", "output_limit", "infra_error")
LANGUAGES = ("python", "bash", "c", "cpp")
MAX_TIMEOUT_S = 600.0
MAX_MEMORY_MB = 65536
_request_ids = itertools.count()


@dataclasses.dataclass
class ExecResult:
    """The outcome of one program run.

    ``status``: ``ok`` (exit 0), ``error`` (non-zero exit or a signal), ``timeout`` (CPU budget or the
    wall-clock backstop exceeded), ``memory`` (allocation refused), ``output_limit`` (stdout/stderr over the
    cap) or ``infra_error`` (the sandbox itself failed: never count that as the program's fault).
    ``exit_code`` is negative for a signal (``-9``: killed). ``stdout``/``stderr`` are capped.
    """

    status: str
    exit_code: int | None
    stdout: str
    stderr: str
    wall_s: float
    cpu_s: float
    backend: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], backend: str = "") -> ExecResult:
        return cls(
            status=data["status"],
            exit_code=data.get("exit_code"),
            stdout=data.get("stdout", ""),
            stderr=data.get("stderr", ""),
            wall_s=float(data.get("wall_s", 0.0)),
            cpu_s=float(data.get("cpu_s", 0.0)),
            backend=data.get("backend", backend),
        )


def infra_error(message: str, backend: str) -> ExecResult:
    """A result that says the sandbox, not the program, failed."""
    return ExecResult("infra_error", None, "", message, 0.0, 0.0, backend)


def make_request(
    code: str,
    *,
    language: str = "python",
    stdin: str = "",
    files: Mapping[str, str] | None = None,
    timeout: float = 5.0,
    memory_mb: int = 512,
) -> dict[str, Any]:
    """Check a run's arguments and pack them as the JSON request every backend understands."""
    if not isinstance(code, str):
        raise TypeError(f"code must be a str, got {type(code).__name__}")
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}; supported: {', '.join(LANGUAGES)}")
    if not isinstance(stdin, str):
        raise TypeError(f"stdin must be a str, got {type(stdin).__name__}")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= MAX_TIMEOUT_S:
        raise ValueError(f"timeout must be a number of seconds in (0, {MAX_TIMEOUT_S:g}], got {timeout!r}")
    if isinstance(memory_mb, bool) or not isinstance(memory_mb, int) or not 16 <= memory_mb <= MAX_MEMORY_MB:
        raise ValueError(f"memory_mb must be an int in [16, {MAX_MEMORY_MB}], got {memory_mb!r}")
    checked_files: dict[str, str] = {}
    for name, content in (files or {}).items():
        parts = str(name).split("/")
        if not name or name.startswith("/") or any(part in ("", ".", "..") for part in parts):
            raise ValueError(f"file names must be relative paths without '..' or empty parts, got {name!r}")
        if not isinstance(content, str):
            raise TypeError(f"file {name!r}: content must be a str, got {type(content).__name__}")
        checked_files[name] = content
    return {
        "id": next(_request_ids),
        "language": language,
        "code": code,
        "stdin": stdin,
        "files": checked_files,
        "timeout": float(timeout),
        "memory_mb": memory_mb,
    }
