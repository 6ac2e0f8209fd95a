"""The `text` skill: diff, regex find/replace, counts, case conversion, slugs, sorting, extraction.

All tools take the text itself as an argument (files are the filesystem skill's job; a model can read
a file and pass it on). Inputs are capped at `MAX_TEXT` characters because a regular expression over
megabytes of text can hold a worker for a long time, and outputs are capped for the context window.
The model's regular expressions run on RE2 (`_regex.py`): linear time, so `(a+)+$` cannot stall the
process; backreferences and lookaround in a pattern get a clear error.

Every tool is linear in its input and bounded in its output, because a Python `re` call (or a big
string operation) holds the GIL: while it runs, every other tool call and gateway session waits, and a
timed-out call's thread cannot be stopped. So the extraction patterns run on RE2 too (Python's `re`
took 5 s on 40,000 a's for the e-mail pattern), case conversion splits words in one pass (the old
`([A-Z]+)([A-Z][a-z])` took 12 s on 30,000 A's), match loops stop after `MAX_MATCHES` (the RE2
wrapper costs ~10 us a match), and a replacement whose result would pass `MAX_OUTPUT` characters is
refused before it is built (an empty pattern with a long replacement built 400 MB).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from ._diff import unified_diff
from ._regex import compile_pattern, expander

__all__ = [
    "convert_case",
    "count_text",
    "extract_patterns",
    "regex_find",
    "regex_replace",
    "slugify",
    "sort_lines",
    "text_diff",
]

MAX_TEXT = 1_000_000
MAX_OUTPUT = 2_000_000  # characters a replacement may produce
MAX_MATCHES = 50_000  # matches one call walks (count and replace): ~1 s of the RE2 wrapper's time
MAX_SHOWN = 10_000  # matches regex_find may list


def _check(text: str, name: str = "text") -> str:
    if len(text) > MAX_TEXT:
        raise ValueError(f"{name} is longer than {MAX_TEXT} characters; split it up")
    return text


def _compile(pattern: str, ignore_case: bool, multiline: bool = False) -> Any:
    return compile_pattern(pattern, ignore_case=ignore_case, multiline=multiline)


def text_diff(old: str, new: str, context_lines: int = 3, old_name: str = "old", new_name: str = "new") -> str:
    """A unified diff (like `diff -u`) between two texts."""
    _check(old, "old"), _check(new, "new")
    # A deadline-checked difflib (see _diff.py): SequenceMatcher is quadratic on some inputs.
    diff = unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                        old_name, new_name, max(0, min(context_lines, 1_000)))
    out = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in diff)
    return out or "the texts are identical"


def regex_find(
    pattern: str, text: str, ignore_case: bool = False, multiline: bool = False, max_matches: int = 100
) -> dict[str, Any]:
    """All matches of a regular expression, with positions and capture groups."""
    regex = _compile(pattern, ignore_case, multiline)
    max_matches = max(1, min(max_matches, MAX_SHOWN))
    matches = []
    total = 0
    for m in regex.finditer(_check(text)):
        total += 1
        if total > MAX_MATCHES:
            break
        if len(matches) < max_matches:
            entry: dict[str, Any] = {"match": m.group(0), "start": m.start(), "end": m.end()}
            if regex.groups:
                entry["groups"] = list(m.groups())
            if regex.groupindex:
                entry["named"] = m.groupdict()
            matches.append(entry)
    result: dict[str, Any] = {"count": min(total, MAX_MATCHES), "matches": matches}
    if total > MAX_MATCHES:
        result["note"] = f"more than {MAX_MATCHES} matches: counting stopped there; only the first {max_matches} shown"
    elif total > max_matches:
        result["note"] = f"only the first {max_matches} shown"
    return result


def regex_replace(
    pattern: str, replacement: str, text: str, count: int = 0, ignore_case: bool = False, multiline: bool = False
) -> dict[str, Any]:
    """Replace matches of a regular expression (backreferences like \\1 or \\g<name> work)."""
    regex = _compile(pattern, ignore_case, multiline)
    expand = expander(replacement, regex.groups, dict(regex.groupindex))
    _check(text)
    budget = {"matches": 0, "chars": len(text)}

    def bounded(m: Any) -> str:
        # Checked per match, so the refusal comes before the big string exists (and before the
        # wrapper's per-match cost adds up to seconds).
        piece = expand(m)
        budget["matches"] += 1
        budget["chars"] += len(piece) - (m.end() - m.start())
        if budget["matches"] > MAX_MATCHES:
            raise ValueError(f"the pattern {pattern!r} matches more than {MAX_MATCHES} times; use a narrower "
                             "pattern, set count, or split the text")
        if budget["chars"] > MAX_OUTPUT:
            raise ValueError(f"the result would be longer than {MAX_OUTPUT} characters; use a narrower pattern "
                             "(an empty pattern matches between every two characters), set count, or split the text")
        return piece

    result, n = regex.subn(bounded, text, count=max(0, count))
    return {"replacements": n, "text": result}


def count_text(text: str) -> dict[str, Any]:
    """Characters, words, lines, sentences, paragraphs and an estimated reading time."""
    _check(text)
    words = re.findall(r"\b[\w'’-]+\b", text)
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s.strip()]
    return {
        "characters": len(text),
        "characters_no_spaces": len(re.sub(r"\s", "", text)),
        "words": len(words),
        "lines": len(text.splitlines()),
        "sentences": len(sentences),
        "paragraphs": len([p for p in re.split(r"\n\s*\n", text) if p.strip()]),
        "unique_words": len({w.lower() for w in words}),
        "reading_time_minutes": round(len(words) / 238, 1),  # average adult silent reading speed
    }


_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_LOWER_DIGIT = _LOWER | frozenset("0123456789")


def _words(text: str) -> list[str]:
    """Words of camelCase, PascalCase, snake/kebab/dotted text, in one pass (linear).

    A word starts at an upper-case letter after a lower-case letter or digit ("fooBar"), and at the last
    capital of a run that a lower-case letter follows ("HTTPServer" -> HTTP, Server).
    """
    words: list[str] = []
    for chunk in re.split(r"[\s_\-.]+", text):
        start = 0
        for i in range(1, len(chunk)):
            here, before = chunk[i], chunk[i - 1]
            if here in _UPPER and (before in _LOWER_DIGIT or (
                    before in _UPPER and i + 1 < len(chunk) and chunk[i + 1] in _LOWER)):
                words.append(chunk[start:i])
                start = i
        if chunk:
            words.append(chunk[start:])
    return words


def convert_case(text: str, to: str) -> dict[str, str]:
    """upper, lower, title, sentence, snake, camel, pascal, kebab or constant case."""
    _check(text)
    words = _words(text)
    converters = {
        "upper": lambda: text.upper(),
        "lower": lambda: text.lower(),
        "title": lambda: text.title(),
        "sentence": lambda: text[:1].upper() + text[1:].lower(),
        "snake": lambda: "_".join(w.lower() for w in words),
        "kebab": lambda: "-".join(w.lower() for w in words),
        "constant": lambda: "_".join(w.upper() for w in words),
        "camel": lambda: "".join(w.lower() if i == 0 else w.capitalize() for i, w in enumerate(words)),
        "pascal": lambda: "".join(w.capitalize() for w in words),
    }
    if to not in converters:
        raise ValueError(f"unknown case {to!r}; choose one of {', '.join(converters)}")
    return {"case": to, "text": converters[to]()}


def slugify(text: str, separator: str = "-", max_length: int = 80) -> dict[str, str]:
    """A URL/file-name friendly slug: ASCII, lower case, words joined by the separator."""
    ascii_text = unicodedata.normalize("NFKD", _check(text)).encode("ascii", "ignore").decode()
    slug = separator.join(re.findall(r"[a-z0-9]+", ascii_text.lower()))
    return {"slug": slug[:max_length].rstrip(separator)}


def sort_lines(
    text: str, reverse: bool = False, unique: bool = False, numeric: bool = False, ignore_case: bool = False
) -> str:
    """Sort lines; optionally numerically, case-insensitively, descending, and removing duplicates."""
    lines = _check(text).splitlines()
    if unique:
        seen: set[str] = set()
        lines = [l for l in lines if not ((k := l.lower() if ignore_case else l) in seen or seen.add(k))]

    def key(line: str) -> Any:
        if numeric:
            m = re.match(r"\s*([-+]?\d+(?:\.\d+)?)", line)
            return (0, float(m.group(1)), line) if m else (1, 0.0, line)
        return line.lower() if ignore_case else line

    return "\n".join(sorted(lines, key=key, reverse=reverse))


# RE2 syntax (linear time): `\w` and `\b` are ASCII-only there, so word characters are spelled as
# Unicode classes, and "not after a word character" (a lookbehind, which RE2 lacks) is a consumed
# non-word character before a capture group: the group is what is extracted.
_WORD = r"[\pL\pN_]"
_EXTRACT = {
    "emails": rf"[\pL\pN_.+-]+@[\pL\pN_-]+(?:\.[\pL\pN_-]+)+",
    "urls": r"https?://[^\s<>\"')\]]+",
    "numbers": r"[-+]?\d+(?:[.,]\d+)*(?:\.\d+)?",
    "dates": r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b",
    "hashtags": rf"(?:^|[^\pL\pN_])(#{_WORD}+)",
    "mentions": rf"(?:^|[^\pL\pN_])(@{_WORD}+)",
    "ip_addresses": r"\b(?:\d{1,3}\.){3}\d{1,3}\b",
    "phone_numbers": r"\+?\d[\d\s().-]{7,}\d",
}
MAX_EXTRACTED = 500


def extract_patterns(text: str, kinds: list[str] | None = None) -> dict[str, list[str]]:
    """Pull emails, URLs, numbers, dates, hashtags, mentions, IPs or phone numbers out of text."""
    _check(text)
    chosen = kinds or list(_EXTRACT)
    unknown = [k for k in chosen if k not in _EXTRACT]
    if unknown:
        raise ValueError(f"unknown kind(s) {unknown}; choose from {', '.join(_EXTRACT)}")
    out = {}
    for kind in chosen:
        regex = compile_pattern(_EXTRACT[kind])
        found: dict[str, None] = {}
        for seen, m in enumerate(regex.finditer(text)):
            if len(found) >= MAX_EXTRACTED or seen >= MAX_MATCHES:
                break
            found[m.group(m.lastindex or 0).rstrip(".,;")] = None
        out[kind] = list(found)
    return out
