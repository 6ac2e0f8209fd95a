"""Regular expressions from the model, run by a linear-time engine (RE2, the `google-re2` package).

Python's `re` backtracks: `(a+)+$` over 28 a's took 27 s, past the tool's 10 s timeout (the executor
abandons a timed-out thread but cannot stop it), and since `re` holds the GIL every other thread of the
process froze too. RE2 guarantees time linear in the text and bounded memory (`max_mem`), so a model's
pattern can never stall the process; the price is that backreferences (`\\1` inside the pattern) and
lookaround (`(?=`, `(?!`, `(?<=`, `(?<!`) are not supported, and such a pattern gets a clear error
saying so. Replacement templates keep Python's syntax (`\\1`, `\\g<name>`, `\\n`), expanded here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import re2

__all__ = ["compile_pattern", "expander"]

MAX_PATTERN = 10_000  # characters: a pattern is a few dozen in practice
# RE2 tracks every capture group through the whole text, and the wrapper decodes every group's span
# per match in Python: 300 groups took 18 s for one search over 100,000 characters. Linear, but with
# a constant that the pattern chooses; this caps it (non-capturing (?:...) groups cost nothing extra).
MAX_GROUPS = 16
_MAX_MEM = 64 << 20  # bytes RE2 may use for one compiled pattern
_UNSUPPORTED = {
    "(?=": "lookahead (?=...)", "(?!": "negative lookahead (?!...)", "(?<=": "lookbehind (?<=...)",
    "(?<!": "negative lookbehind (?<!...)", "(?P=": "a named backreference (?P=name)",
}
_BACKREF = re.compile(r"(?<!\\)(?:\\\\)*\\[1-9]")
_TEMPLATE = re.compile(r"\\(?:g<([^>]*)>|([0-9]{1,2})|(.))", re.DOTALL)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a", "b": "\b", "\\": "\\"}


def compile_pattern(pattern: str, *, ignore_case: bool = False, multiline: bool = False) -> Any:
    """A compiled RE2 pattern, or ValueError naming what is wrong (and what RE2 cannot do)."""
    if len(pattern) > MAX_PATTERN:
        raise ValueError(f"the regular expression is longer than {MAX_PATTERN} characters")
    options = re2.Options()
    options.log_errors = False  # RE2 would print every bad pattern to stderr
    options.max_mem = _MAX_MEM
    options.case_sensitive = not ignore_case
    options.one_line = not multiline  # one_line off: ^ and $ match at line breaks
    flags = "(?m)" if multiline else ""
    try:
        compiled = re2.compile(flags + pattern, options=options)
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) \
            else str(exc)
        unsupported = [what for token, what in _UNSUPPORTED.items() if token in pattern]
        if _BACKREF.search(pattern):
            unsupported.append("a backreference such as \\1")
        if unsupported:
            raise ValueError(
                f"the regular expression {pattern!r} uses {', '.join(unsupported)}, which the linear-time "
                "regex engine (RE2) does not support; rewrite it without them (e.g. match more and filter, "
                "or use capture groups)") from None
        raise ValueError(f"invalid regular expression {pattern!r}: {reason}") from None
    if compiled.groups > MAX_GROUPS:
        raise ValueError(f"the regular expression has {compiled.groups} capture groups; at most {MAX_GROUPS} are "
                         "allowed: use (?:...) for groups you do not need to capture")
    return compiled


def expander(template: str, groups: int, names: dict[str, int]) -> Callable[[Any], str]:
    """A function giving the replacement text for one match: Python `re.sub` template syntax."""
    for match in _TEMPLATE.finditer(template):  # check once, so a bad template fails before any work
        name, number, _ = match.groups()
        ref = name if name is not None else number
        if ref is None:
            continue
        if ref.isdigit():
            if int(ref) > groups:
                raise ValueError(f"invalid replacement {template!r}: invalid group reference {ref}")
        elif ref not in names:
            raise ValueError(f"invalid replacement {template!r}: unknown group name {ref!r}")

    # Parsed once into literal text and group references, so a match costs a few lookups, not a
    # regex substitution (a replace may run for up to text.MAX_MATCHES matches).
    parts: list[str | int] = []
    pos = 0
    for part in _TEMPLATE.finditer(template):
        parts.append(template[pos:part.start()])
        name, number, other = part.groups()
        ref = name if name is not None else number
        if ref is None:
            parts.append(_ESCAPES.get(other, "\\" + other))
        else:
            parts.append(int(ref) if ref.isdigit() else names[ref])
        pos = part.end()
    parts.append(template[pos:])
    literal = "".join(p for p in parts if isinstance(p, str))
    if all(isinstance(p, str) for p in parts):
        return lambda m: literal

    def expand(m: Any) -> str:
        return "".join(p if isinstance(p, str) else (m.group(p) or "") for p in parts)

    return expand
