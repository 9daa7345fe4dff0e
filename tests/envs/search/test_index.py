"""SearchIndex: BM25 over {id, title, text} (or Search-R1's {id, contents}); any query string is valid."""

import json

import pytest

from envgym.envs.search.index import SearchIndex, format_hits

DOCUMENTS = [
    {"id": "a", "title": "Velmora", "text": "Velmora is a city in Tarsk. Velmora was founded in 1204."},
    {"id": "b", "title": "Tarsk", "text": "Tarsk is a country whose capital is Velmora."},
    {"id": "c", "title": "Ana Quill", "text": "Ana Quill is a potter. Ana Quill was born in Velmora."},
]


@pytest.fixture(scope="module")
def index() -> SearchIndex:
    return SearchIndex(DOCUMENTS)


def test_an_entity_name_finds_its_own_document_first(index):
    assert [d["id"] for d, _ in index.search("Velmora", 3)] == ["a", "b", "c"]
    assert index.search("Ana Quill", 1)[0][0]["id"] == "c"


def test_scores_are_floats_best_first(index):
    scores = [score for _, score in index.search("Velmora", 3)]
    assert all(isinstance(s, float) for s in scores) and scores == sorted(scores, reverse=True)


def test_batches_answer_each_query_in_order(index):
    results = index.search_batch(["Tarsk", "potter"], 1)
    assert [hits[0][0]["id"] for hits in results] == ["b", "c"]


@pytest.mark.parametrize("query", ['"unclosed', "title:(x", "AND OR NOT", "*?+-", ""])
def test_any_text_is_a_valid_query(index, query):
    assert isinstance(index.search(query, 3), list)


def test_an_empty_query_finds_nothing(index):
    assert index.search("   ", 3) == []


def test_search_r1_corpus_rows_are_read(tmp_path):
    path = tmp_path / "wiki.jsonl"
    path.write_text(
        "\n".join(
            json.dumps({"id": str(i), "contents": f'"{d["title"]}"\n{d["text"]}'}) for i, d in enumerate(DOCUMENTS)
        )
    )
    index = SearchIndex.from_jsonl(path)
    assert index.search("potter", 1)[0][0] == {"id": "2", "title": "Ana Quill", "text": DOCUMENTS[2]["text"]}


def test_a_document_without_text_is_rejected_with_its_fields():
    with pytest.raises(ValueError, match="document 0 has neither 'text' nor 'contents'; its fields are \\['body'\\]"):
        SearchIndex([{"body": "x"}])


def test_results_are_formatted_like_search_r1(index):
    assert format_hits(index.search("Tarsk", 1)) == "Doc 1(Title: Tarsk) Tarsk is a country whose capital is Velmora."
    assert format_hits([]) == "No results."
