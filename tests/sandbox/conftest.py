"""Sandbox fixtures: one backend per test module run, and a check that nothing the jobs started survives."""

from __future__ import annotations

import pytest

from envgym.sandbox.local import LocalBackend


@pytest.fixture(scope="session")
def local_backend():
    backend = LocalBackend()
    yield backend
    backend.close()


@pytest.fixture(scope="session")
def docker_backend():
    """The Docker pool; builds the image from the host's Python when missing, skips without dockerd."""
    docker = pytest.importorskip("docker", reason="the docker SDK is not installed (pip install envgym[docker])")
    try:
        client = docker.from_env()
        client.ping()
    except Exception as error:  # noqa: BLE001
        pytest.skip(f"dockerd is not running ({type(error).__name__}); start it with scripts/services.sh")
    from envgym.sandbox.docker import DockerBackend
    from envgym.sandbox.images import DEFAULT_TAG, build_python_base_image

    try:
        client.images.get(DEFAULT_TAG)
    except docker.errors.ImageNotFound:
        build_python_base_image(DEFAULT_TAG, client=client)
    backend = DockerBackend()
    yield backend
    backend.close()


@pytest.fixture(params=["local", pytest.param("docker", marks=pytest.mark.docker)])
def backend(request, local_backend):
    """Every backend the security tests must hold for (Docker ones skip when dockerd is not running)."""
    chosen = local_backend if request.param == "local" else request.getfixturevalue(f"{request.param}_backend")
    yield chosen
    assert chosen.job_processes() == [], "a job left processes running"
