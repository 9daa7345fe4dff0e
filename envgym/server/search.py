"""`envgym serve search`: a Search-R1-compatible retrieval server (its client is
:class:`~envgym.envs.search.client.SearchClient`).

``POST /retrieve`` takes ``{"queries": [...], "topk": k, "return_scores": bool}`` and answers
``{"result": [[doc, ...], ...]}`` (one list per query), where ``doc`` is ``{"id", "title", "text", "contents"}``
and ``contents = '"title"\\ntext'`` as in Search-R1's retriever; with ``return_scores`` each entry is
``{"document": doc, "score": float}``. So Search-R1, verl and SkyRL search tools can point at this server,
and :class:`~envgym.envs.search.client.SearchClient` can point at theirs.
"""

import contextlib
from collections.abc import Iterator
from typing import Any

MAX_QUERIES_PER_REQUEST = 10_000
MAX_TOPK = 1000


def create_app(index: Any, default_topk: int = 3) -> Any:
    """The FastAPI app serving ``index`` (a :class:`~envgym.envs.search.index.SearchIndex`)."""
    from fastapi import FastAPI
    from pydantic import BaseModel, Field

    from envgym.envs.search.index import search_r1_document

    # Defined here so that importing this module (the CLI does) stays free of pydantic; no postponed
    # annotations in this file, so FastAPI sees the class itself.
    class RetrieveRequest(BaseModel):
        queries: list[str] = Field(max_length=MAX_QUERIES_PER_REQUEST)
        topk: int | None = Field(default=None, ge=1, le=MAX_TOPK)
        return_scores: bool = False

    app = FastAPI(title="envgym search", description="BM25 retrieval with Search-R1's /retrieve request shape.")

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {"status": "ok", "documents": len(index)}

    @app.post("/retrieve")
    async def retrieve(request: RetrieveRequest) -> dict[str, Any]:
        results = index.search_batch(request.queries, request.topk or default_topk)
        if request.return_scores:
            return {"result": [[{"document": search_r1_document(d), "score": s} for d, s in hits] for hits in results]}
        return {"result": [[search_r1_document(d) for d, _ in hits] for hits in results]}

    return app


@contextlib.contextmanager
def serve_in_thread(index: Any, *, host: str = "127.0.0.1", port: int = 0, default_topk: int = 3) -> Iterator[str]:
    """Run the search server in a thread of this process (``port=0``: a free port); yields its URL, stops on exit."""
    from envgym.server.launch import app_in_thread

    with app_in_thread(create_app(index, default_topk), host=host, port=port) as url:
        yield url


def build_index(corpus: str | None, num_docs: int, seed: int) -> Any:
    """The index a server or benchmark uses: a JSONL corpus file, or the synthetic world of that size and seed."""
    from envgym.envs.search.index import SearchIndex

    if corpus:
        return SearchIndex.from_jsonl(corpus)
    from envgym.envs.search.world import World

    return SearchIndex(World(num_docs, seed).documents())
