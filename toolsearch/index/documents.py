"""What of a tool gets indexed, field by field.

One search document per tool, with these fields (BM25F weighs each with its own boost):

    name         the tool name (split into words, plus the whole name as one compound term)
    description  the tool description
    params       parameter names, nested ones included (split like names)
    param_docs   parameter descriptions, enum values and titles
    tags         tool tags and its skill's tags
    examples     example requests given in the skill file
    skill        the skill's name and description

Parameter names and their descriptions are separate fields because they carry very different
evidence: a query word equal to a parameter name (`city`, `currency`) is a strong hint, while words of a
long parameter description are diluted prose.
"""

from __future__ import annotations

from typing import Any

from ..catalog.model import Skill, Tool
from .analysis import analyze

__all__ = ["FIELDS", "analyzed_fields", "field_texts"]

FIELDS: tuple[str, ...] = (
    "name",
    "description",
    "params",
    "param_docs",
    "tags",
    "examples",
    "skill",
)

_MEMO_MAX = 200_000  # distinct texts remembered per build (bounds its memory)
_MAX_DEPTH = 6  # deep enough for real schemas; stops pathological self-similar ones early


def _walk_schema(schema: Any, names: list[str], docs: list[str], depth: int = 0) -> None:
    """Collect property names into `names` and descriptive text into `docs`, in schema order.

    Appends to two lists rather than yielding pairs: a recursive generator costs a frame switch per
    item at every level, a fifth of the analysis time of a large build.
    """
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return
    get = schema.get
    if depth > 0:
        for key in ("description", "title"):
            text = get(key)
            if isinstance(text, str):
                docs.append(text)
    enum = get("enum")
    if isinstance(enum, list):
        docs.append(" ".join(str(v) for v in enum if isinstance(v, (str, int, float))))
    properties = get("properties")
    if isinstance(properties, dict):
        for name, sub in properties.items():
            names.append(str(name))
            _walk_schema(sub, names, docs, depth + 1)
    for key in ("items", "additionalProperties"):
        sub = get(key)
        if isinstance(sub, dict):
            _walk_schema(sub, names, docs, depth + 1)
    for key in ("anyOf", "oneOf", "allOf"):
        options = get(key)
        if isinstance(options, list):
            for sub in options:
                _walk_schema(sub, names, docs, depth + 1)


def field_texts(tool: Tool, skill: Skill | None = None) -> dict[str, str]:
    """The raw text of each field of `tool`'s search document."""
    names: list[str] = []
    docs: list[str] = []
    _walk_schema(tool.input_schema, names, docs)
    skill_tags = skill.tags if skill is not None else ()
    skill_text = skill.name if skill is not None else tool.skill
    if skill is not None and skill.description:
        skill_text += "\n" + skill.description
    return {
        "name": tool.name,
        "description": tool.description,
        "params": " ".join(names),
        "param_docs": "\n".join(docs),
        "tags": " ".join((*tool.tags, *skill_tags)),
        "examples": "\n".join(tool.examples),
        "skill": skill_text,
    }


def analyzed_fields(tool: Tool, skill: Skill | None = None, *,
                    memo: dict[str, list[str]] | None = None) -> list[list[str]]:
    """Analyzed terms of every field, in `FIELDS` order.

    `memo` (text -> its terms), shared across the tools of one build, analyzes each distinct text once:
    half the field texts of a catalog repeat (a skill's text is in every one of its tools, parameter
    lists and their descriptions recur). The lists in it are shared between tools: read them only."""
    texts = field_texts(tool, skill)
    if memo is None:
        return [analyze(texts[f]) for f in FIELDS]
    out = []
    for f in FIELDS:
        text = texts[f]
        terms = memo.get(text)
        if terms is None:
            if len(memo) >= _MEMO_MAX:
                memo.clear()
            terms = memo[text] = analyze(text)
        out.append(terms)
    return out
