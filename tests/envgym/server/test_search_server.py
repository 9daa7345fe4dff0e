"""`envgym serve search`: Search-R1's POST /retrieve shape, spoken with plain httpx."""

import httpx
import pytest

from envgym.envs.search.client import SearchClient
from envgym.envs.search.index import SearchIndex
from envgym.envs.search.world import World
from envgym.server.search import serve_in_thread


@pytest.fixture(scope="module")
def world() -> World:
    return World(1000, seed=0)


@pytest.fixture(scope="module")
def url(world):
    with serve_in_thread(SearchIndex(world.documents())) as address:
        assert address.startswith("http://127.0.0.1:")
        yield address


def test_retrieve_answers_one_list_of_documents_per_query(url, world):
    names = [world.documents()[i]["title"] for i in (5, 500)]
    response = httpx.post(f"{url}/retrieve", json={"queries": names, "topk": 3, "return_scores": False})
    assert response.status_code == 200
    result = response.json()["result"]
    assert [len(hits) for hits in result] == [3, 3]
    first = result[0][0]
    assert first["title"] == names[0] and first["contents"] == f'"{first["title"]}"\n{first["text"]}'


def test_return_scores_wraps_each_document_with_its_score(url, world):
    name = world.documents()[42]["title"]
    result = httpx.post(f"{url}/retrieve", json={"queries": [name], "topk": 2, "return_scores": True}).json()["result"]
    assert set(result[0][0]) == {"document", "score"} and result[0][0]["document"]["title"] == name
    assert result[0][0]["score"] >= result[0][1]["score"]


def test_topk_defaults_to_the_servers_setting(url, world):
    result = httpx.post(f"{url}/retrieve", json={"queries": [world.documents()[1]["title"]]}).json()["result"]
    assert len(result[0]) == 3


def test_a_malformed_request_gets_a_422_that_names_the_field(url):
    response = httpx.post(f"{url}/retrieve", json={"queries": "not a list", "topk": 3})
    assert response.status_code == 422 and "queries" in response.text
    assert httpx.post(f"{url}/retrieve", json={"queries": ["x"], "topk": 0}).status_code == 422


def test_the_client_returns_documents_and_scores(url, world):
    name = world.documents()[7]["title"]
    with SearchClient(url) as client:
        hits = client.search([name], topk=1)
    assert hits[0][0][0] == world.documents()[7] and isinstance(hits[0][0][1], float)


def test_the_envgym_serve_search_command_answers_search_r1_requests(tmp_path):
    """The real command in a subprocess, on a JSONL corpus, spoken to with plain httpx, stopped by the test."""
    from helpers.extras import require

    require("search")
    import json
    import socket
    import subprocess
    import sys
    import time

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps(d) for d in World(300, seed=5).documents()))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, "-m", "envgym", "serve", "search", "--corpus", str(corpus), "--port", str(port)]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, server.stdout.read()
            try:
                if httpx.get(f"{url}/health").json()["documents"] == 300:
                    break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the server did not come up within 60 s"
                time.sleep(0.1)
        title = World(300, seed=5).documents()[10]["title"]
        payload = {"queries": [title], "topk": 2, "return_scores": True}
        result = httpx.post(f"{url}/retrieve", json=payload).json()["result"]
        assert result[0][0]["document"]["contents"].startswith(f'"{title}"\n')
    finally:
        server.terminate()
        server.wait(timeout=30)
