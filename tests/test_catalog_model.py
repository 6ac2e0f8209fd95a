import pytest
from pydantic import ValidationError

from toolsearch import Registry, Skill, Tool
from toolsearch.catalog.model import parse_duration


@pytest.mark.parametrize(
    "text, seconds", [("15s", 15), ("2m", 120), ("500ms", 0.5), ("1h", 3600), (7, 7), ("2.5s", 2.5)]
)
def test_parse_duration(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("bad", ["fast", "-1s", "15 parsecs", True])
def test_parse_duration_rejects(bad):
    with pytest.raises(ValueError):
        parse_duration(bad)


def test_camel_case_aliases_and_ownership():
    skill = Skill.model_validate(
        {
            "name": "web",
            "dependsOn": ["base"],
            "tools": [
                {
                    "name": "google_search",
                    "timeout": "15s",
                    "retry": {"maxAttempts": 3, "backoff": "exponential", "initialDelay": "1s"},
                    "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
                }
            ],
        }
    )
    tool = skill.tools[0]
    assert tool.skill == "web" and tool.timeout == 15 and tool.retry.max_attempts == 3
    assert skill.depends_on == ("base",)
    assert [tool.retry.delay(n) for n in (1, 2, 3)] == [1, 2, 4]


def test_invalid_schema_and_unknown_field_are_errors():
    with pytest.raises(ValidationError) as info:
        Tool.model_validate({"name": "a", "timout": 3, "inputSchema": {"type": "objekt"}})
    text = str(info.value)
    assert "timout" in text and "not a valid JSON Schema" in text


def test_fingerprint_changes_with_searchable_content_only():
    base = Skill(name="s", tools=(Tool(name="a", description="one"),))
    same = Skill(name="s", tools=(Tool(name="a", description="one", handler="m:f"),))
    changed = Skill(name="s", tools=(Tool(name="a", description="two"),))
    assert Registry([base]).catalog.fingerprint == Registry([same]).catalog.fingerprint
    assert Registry([base]).catalog.fingerprint != Registry([changed]).catalog.fingerprint


def test_search_digest_is_exact_and_deterministic_and_falls_back_when_it_cannot_be():
    import datetime
    import os
    import subprocess
    import sys

    from toolsearch.catalog.model import search_digest

    schema = {"type": "object", "properties": {"q": {"type": "string", "description": "query"}}}
    base = [Skill(name="s", tools=(Tool(name="a", description="one", input_schema=schema),))]
    digest = search_digest(base)
    assert digest == search_digest([Skill(name="s", tools=(Tool(name="a", description="one",
                                                                input_schema=dict(schema)),))])
    # Every searchable part changes it; a handler does not.
    for changed in (
        Skill(name="s", tools=(Tool(name="a", description="two", input_schema=schema),)),
        Skill(name="s", description="new", tools=(Tool(name="a", description="one", input_schema=schema),)),
        Skill(name="s", tools=(Tool(name="a", description="one", tags=["t"], input_schema=schema),)),
        Skill(name="s", tools=(Tool(name="a", description="one", pinned=True, input_schema=schema),)),
        Skill(name="s", tools=(Tool(name="a", description="one", input_schema={
            "type": "object", "properties": {"q": {"type": "integer", "description": "query"}}}),)),
    ):
        assert search_digest([changed]) != digest
    assert search_digest([Skill(name="s", tools=(Tool(name="a", description="one", handler="m:f",
                                                      input_schema=schema),))]) == digest
    # Reordered keys: another digest (so callers fall back), the same canonical fingerprint.
    reordered = Skill(name="s", tools=(Tool(name="a", description="one", input_schema={
        "properties": {"q": {"description": "query", "type": "string"}}, "type": "object"}),))
    assert search_digest([reordered]) != digest
    assert reordered.search_fingerprint() == base[0].search_fingerprint()
    # The same in another process (no dependence on hash randomization or object identity).
    code = ("from toolsearch import Skill, Tool; from toolsearch.catalog.model import search_digest; "
            f"print(search_digest([Skill(name='s', tools=(Tool(name='a', description='one', "
            f"input_schema={schema!r}),))]))")
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": "12345"})
    assert other.stdout.strip() == digest
    # Content marshal cannot write gives no digest: only the fingerprints can decide then.
    odd = Tool.model_construct(name="a", description="", input_schema={"default": datetime.date(2024, 1, 1)},
                               tags=(), examples=(), pinned=False, skill="s")
    assert search_digest([Skill.model_construct(name="s", description="", tags=(), tools=(odd,))]) is None
