"""The server images build offline (from the host's Python, no pulls), and their containers serve; the
compose file's three services start and answer. Needs a running dockerd (`bash scripts/services.sh`)."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import httpx
import pytest
import yaml

import envgym
from envgym.remote import RemoteEnv

docker = pytest.importorskip("docker")
pytestmark = pytest.mark.docker
COMPOSE = Path(__file__).resolve().parents[3] / "docker" / "compose.yaml"


def _client():
    try:
        client = docker.from_env()
        client.ping()
        return client
    except Exception as error:  # no socket, no daemon, no permission: all mean "no Docker here"
        pytest.skip(f"dockerd is not running ({type(error).__name__}); start it with `bash scripts/services.sh`")


@pytest.fixture(scope="module")
def images():
    from envgym.server.images import build_images

    client = _client()
    return client, build_images(client)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(url: str, container, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            container.reload()
            if container.status == "exited":
                break
        time.sleep(0.3)
    raise AssertionError(f"{url} did not answer; container logs:\n{container.logs().decode()[-3000:]}")


def run(client, image: str, command: list[str], entrypoint: list[str] | None = None):
    return client.containers.run(
        image,
        command,
        entrypoint=entrypoint,
        network_mode="host",
        detach=True,
        remove=False,
        labels={"envgym-test": "server"},
    )


def test_the_images_are_built_from_the_host_python_without_pulling(images):
    client, built = images
    from envgym.server.images import BASE_TAG, IMAGES

    assert set(built) == {BASE_TAG, *IMAGES}
    for tag in built:
        assert client.images.get(tag).attrs["RepoDigests"] == [], f"{tag} came from a registry"
    (layer,) = client.images.get(BASE_TAG).history()  # one layer, imported from our own root file system
    assert layer["Comment"].startswith("Imported from")


def test_the_base_image_carries_libraries_that_site_packages_load_with_ctypes(images):
    client, _ = images
    from envgym.server.images import BASE_TAG

    output = client.containers.run(
        BASE_TAG,
        ["-c", "import pyseccomp; print('libseccomp found')"],
        entrypoint=["python"],
        network_mode="none",
        remove=True,
    )
    assert output.decode().strip() == "libseccomp found"


def test_the_env_server_container_plays_episodes_for_a_remote_env(images):
    client, _ = images
    port = free_port()
    container = run(client, "envgym-env-server:latest", ["--host", "127.0.0.1", "--port", str(port)])
    try:
        wait_for(f"http://127.0.0.1:{port}/health", container)
        remote, local = (
            RemoteEnv(f"http://127.0.0.1:{port}", "games/GuessNumber-v0"),
            envgym.make("games/GuessNumber-v0"),
        )
        assert remote.reset(seed=1, options={"task_index": 3}) == local.reset(seed=1, options={"task_index": 3})
        for guess in (50, 25, 12):
            assert remote.step(f"<guess>{guess}</guess>") == local.step(f"<guess>{guess}</guess>")
        remote.close()
    finally:
        container.remove(force=True)


def test_the_compose_services_start_and_answer(images):
    """Runs each service of docker/compose.yaml as compose would (image, entrypoint, command), on free ports."""
    client, _ = images
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    assert set(services) == {"env-server", "sandbox", "search"}
    health = {"env-server": "/health", "sandbox": "/v1/ping", "search": "/health"}
    containers = []
    try:
        urls = {}
        for name, service in services.items():
            assert service["pull_policy"] == "never" and service["network_mode"] == "host"
            command = list(service["command"])
            port = free_port()
            command[command.index("--port") + 1] = str(port)
            containers.append(run(client, service["image"], command, service.get("entrypoint")))
            urls[name] = (f"http://127.0.0.1:{port}{health[name]}", containers[-1])
        for url, container in urls.values():
            wait_for(url, container, timeout_s=120)
    finally:
        for container in containers:
            container.remove(force=True)
