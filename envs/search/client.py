"""The client of a Search-R1-shaped ``POST /retrieve`` endpoint: ``envgym serve search``
(:mod:`envgym.server.search`) or Search-R1's own retriever, which :class:`~envgym.envs.search.multihop.MultiHopQA`
searches through when given a ``retriever_url``."""

from collections.abc import Sequence
from typing import Any


class SearchClient:
    """Talks to any Search-R1-shaped ``/retrieve`` endpoint (ours or Search-R1's own retriever)."""

    def __init__(self, url: str, timeout: float = 30.0):
        import httpx

        self._client = httpx.Client(base_url=url.rstrip("/"), timeout=timeout)

    def retrieve(
        self, queries: Sequence[str], topk: int = 3, return_scores: bool = False
    ) -> list[list[dict[str, Any]]]:
        """The raw ``result`` lists, exactly as the server sent them."""
        response = self._client.post(
            "/retrieve", json={"queries": list(queries), "topk": topk, "return_scores": return_scores}
        )
        if response.status_code != 200:
            raise RuntimeError(f"search server answered {response.status_code}: {response.text[:500]}")
        return response.json()["result"]

    def search(self, queries: Sequence[str], topk: int = 3) -> list[list[tuple[dict[str, str], float]]]:
        """Like :meth:`SearchIndex.search_batch`: (``{"id", "title", "text"}``, score) per hit."""
        from envgym.envs.search.index import normalize_document

        results = self.retrieve(queries, topk, return_scores=True)
        return [[(normalize_document(hit["document"], 0), float(hit["score"])) for hit in hits] for hits in results]

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> "SearchClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
