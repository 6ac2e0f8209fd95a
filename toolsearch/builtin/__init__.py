"""Handlers of the bundled skills in `skills/*.yaml` (one module per skill; the YAML points here).

    filesystem  read/write/edit/list/glob/grep/info/mkdir/move/delete, confined to the workspace
    shell       run_command: off unless ToolContext(allow_shell=True); process-group kill on timeout
    todo        the per-session plan (`TodoPlan`, `plan_summary` for the agent loop's reminder)
    sqlite      read-only queries of a database file (mode=ro, query_only, no ATTACH)
    mathx       safe calculator (ast walk, no eval), statistics, percentages, bases, primes, random
    units       convert_units (part of the `math` skill)
    clock       the `datetime` skill: now, time zones, date arithmetic, differences, timestamps
    text        diff, regex find/replace, counts, case, slugs, sorting, extraction
    encoding    base64, hex, URL, HTML, hashes, UUIDs
    jsonx       the `json` skill: query (JSONPath subset), format, validate, merge, flatten
    http        GET/POST via urllib (transient failures raise ConnectionError so GET is retried)
    git         read-only git views via the git binary (argv, no shell, refs checked)
    csvx        the `csv` skill: preview, summary, to JSON
    _workspace  path confinement shared by every tool that touches files

Handlers are plain functions: keyword parameters match the tool's input schema, a parameter named
`context` receives the `ToolContext`, bad requests raise `ValueError` with a message for the model.
Nothing is imported here, so `import toolsearch` stays light; the runtime imports a module on first call.
"""
