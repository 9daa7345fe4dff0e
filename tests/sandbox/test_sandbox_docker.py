"""What only the Docker backend does: offline image builds and container recycling."""

import pytest

from envgym.sandbox import run

pytestmark = pytest.mark.docker


def test_the_image_is_built_from_the_hosts_python_without_a_registry(docker_backend):
    from envgym.sandbox.images import build_python_base_image

    tag = "envgym-sandbox-test:latest"
    build_python_base_image(tag, client=docker_backend.client)
    try:
        output = docker_backend.client.containers.run(
            tag, ["python3", "-c", "import json, os; print(os.getuid())"], network_mode="none", remove=True
        )
        assert output == b"65534\n"
    finally:
        docker_backend.client.images.remove(tag, force=True)


def test_a_container_is_replaced_after_a_violation(docker_backend):
    before = {container.id for container in docker_backend._all}
    assert run("while True: pass", timeout=1, backend=docker_backend).status == "timeout"
    after = {container.id for container in docker_backend._all}
    assert len(after) == len(before) and after != before


def test_containers_have_no_network_and_a_read_only_root(docker_backend):
    container = next(iter(docker_backend._all))
    host_config = container.attrs["HostConfig"]
    assert host_config["NetworkMode"] == "none" and host_config["ReadonlyRootfs"] is True
    assert host_config["CapDrop"] == ["ALL"] and container.attrs["Config"]["User"] == "65534:65534"
