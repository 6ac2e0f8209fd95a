"""The JSON Schema (2020-12, plus draft-07 `definitions`/`additionalItems`) keywords whose values are
themselves schemas, grouped by how the subschemas are held.

Code that walks a schema (the fast metaschema check in `jsonl`, the title stripping in `signature`)
must know where subschemas live and where a dict is just data: under `default`, `enum`, `const` or
`examples` a `title` key or a nested dict is a value, not a schema. Keeping the tables here means a
keyword added for one walker is seen by the other.

`properties` is left out of `SUBSCHEMA_MAP` on purpose: walkers treat it differently (the `jsonl`
check visits each property as its own node), so each adds it where it belongs.
"""

from __future__ import annotations

__all__ = ["SUBSCHEMA", "SUBSCHEMA_LIST", "SUBSCHEMA_MAP"]

# The value is one subschema.
SUBSCHEMA: frozenset[str] = frozenset(
    {
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "additionalItems",
        "contentSchema",
    }
)
# The value is a list of subschemas.
SUBSCHEMA_LIST: frozenset[str] = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
# The value maps names (or patterns) to subschemas.
SUBSCHEMA_MAP: frozenset[str] = frozenset({"$defs", "definitions", "patternProperties", "dependentSchemas"})
