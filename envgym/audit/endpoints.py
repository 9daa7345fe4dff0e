"""Which judge endpoint a target's judges ask during its audit: the obedient judge, the spec's own, or a URL."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from envgym.audit.runner import AuditSettings
    from envgym.audit.target import AuditTarget

OBEDIENT = "obedient"
SPEC_JUDGE = "spec"


class JudgeUnavailable(RuntimeError):
    """The judge a target's spec needs cannot be asked (the obedient judge is not installed, a URL is down)."""


@contextlib.contextmanager
def judge_endpoint(target: AuditTarget, settings: AuditSettings) -> Iterator[str | None]:
    """The endpoint the target's judges ask during its audit (None: no judge, or the spec's own)."""
    if not target.judged:
        yield None
        return
    if settings.judge == OBEDIENT:
        try:
            from envgym.audit.obedient_judge import obedient_judge
        except ImportError as error:
            raise JudgeUnavailable(
                f"the obedient judge (envgym.audit.obedient_judge) is not available: {error}"
            ) from None
        with obedient_judge() as base_url:
            yield base_url
        return
    url = None if settings.judge == SPEC_JUDGE else settings.judge
    for component in target.components():
        endpoint = url or component.get("base_url")
        if endpoint and (component["source"] in ("judge", "judge_group") or component.get("scorer") == "judge"):
            _probe(endpoint)
    yield url


def _probe(base_url: str) -> None:
    """Raise :class:`JudgeUnavailable` when nothing answers at ``base_url`` (a judge that is down is not the
    policy's failure, so the audit says so instead of reporting every episode)."""
    import httpx

    try:
        httpx.get(base_url.rstrip("/") + "/models", timeout=10.0)
    except httpx.TransportError as error:
        raise JudgeUnavailable(f"the judge at {base_url} does not answer ({type(error).__name__})") from None
