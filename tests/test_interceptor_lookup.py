"""The retriever adapter (`as_retriever`: exclude=/allow= for retrievers without them), lookup.py's
argument check, and a repeated query in one conversation finding the next-best tools instead of the
loaded ones."""

from __future__ import annotations

import toolsearch
from toolsearch.catalog.hits import FilteringRetriever, as_retriever
from toolsearch.interceptor.lookup import argument_error
from toolsearch.testing import FakeModelServer, ScriptedModel, reply, search

from test_interceptor_core import USER, names, searcher  # noqa: F401 (fixture)


class PlainRetriever:
    """A retriever with only `search(query, k)`, as third-party retrievers may be."""

    def __init__(self, inner):
        self.inner = inner
        self.catalog = inner.catalog
        self.asked = []

    def search(self, query, k=5):
        self.asked.append(k)
        return self.inner.search(query, k)


def test_as_retriever_filters_for_retrievers_without_the_keywords(searcher):
    plain = PlainRetriever(searcher)
    adapted = as_retriever(plain)
    assert isinstance(adapted, FilteringRetriever) and as_retriever(adapted) is adapted
    assert as_retriever(searcher) is searcher  # a Searcher takes exclude=/allow= itself
    full = [h.name for h in searcher.search("weather forecast city", 3)]
    got = [h.name for h in adapted.search("weather forecast city", 3, exclude=frozenset(full[:1]))]
    assert full[0] not in got and plain.asked == [4]  # over-fetched by the excluded count
    no_mail = [h.name for h in adapted.search("send email", 5, allow=lambda t: t.skill != "mail")]
    assert "send_email" not in no_mail
    direct = [h.name for h in as_retriever(searcher).search("weather forecast city", 3,
                                                            exclude=frozenset(full[:1]))]
    assert full[0] not in direct


def test_a_plain_retriever_still_serves_the_interceptor(searcher):
    """A retriever written before the protocol declared exclude=/allow= works through wrap(): a repeated
    query still finds the next-best tools (the adapter filters what it returns)."""
    plain = PlainRetriever(searcher)
    script = [reply(None, search("weather", 1)), reply("a"), reply(None, search("weather", 1)), reply("b")]
    with FakeModelServer(ScriptedModel(script)) as server:
        client = toolsearch.wrap(server.client(), plain)
        first = client.chat.completions.create(model="fake", messages=USER).toolsearch.searches[0].hits
        second = client.chat.completions.create(model="fake", messages=USER).toolsearch.searches[0].hits
    assert first and second and first != second and plain.asked == [1, 2]


def test_a_repeated_query_finds_the_next_best_tools(searcher):
    script = [reply(None, search("weather", 1)), reply("a"), reply(None, search("weather", 1)), reply("b")]
    with FakeModelServer(ScriptedModel(script)) as server:
        client = toolsearch.wrap(server.client(), searcher)
        first = client.chat.completions.create(model="fake", messages=USER).toolsearch.searches[0].hits
        second = client.chat.completions.create(model="fake", messages=USER).toolsearch.searches[0].hits
        sent = names(server.requests[-1])
    assert first and second and first != second  # not the already-loaded tool again
    assert set(first) | set(second) <= set(sent)


def test_argument_error_names_the_problem(searcher):
    tool = searcher.catalog.tool("send_email")
    assert argument_error(tool, '{"to": "a", "body": "b"}') is None
    assert "body" in argument_error(tool, '{"to": "a"}')
