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
