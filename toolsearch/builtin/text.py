"""The `text` skill: diff, regex find/replace, counts, case conversion, slugs, sorting, extraction.

All tools take the text itself as an argument (files are the filesystem skill's job; a model can read
a file and pass it on). Inputs are capped at `MAX_TEXT` characters because a regular expression over
megabytes of text can hold a worker for a long time, and outputs are capped for the context window.
The model's regular expressions run on RE2 (`_regex.py`): linear time, so `(a+)+$` cannot stall the
process; backreferences and lookaround in a pattern get a clear error.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from typing import Any

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


def _check(text: str, name: str = "text") -> str:
    if len(text) > MAX_TEXT:
        raise ValueError(f"{name} is longer than {MAX_TEXT} characters; split it up")
    return text


def _compile(pattern: str, ignore_case: bool, multiline: bool = False) -> Any:
    return compile_pattern(pattern, ignore_case=ignore_case, multiline=multiline)


def text_diff(old: str, new: str, context_lines: int = 3, old_name: str = "old", new_name: str = "new") -> str:
    """A unified diff (like `diff -u`) between two texts."""
    _check(old, "old"), _check(new, "new")
    diff = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True),
        fromfile=old_name, tofile=new_name, n=max(0, context_lines),
    )
    out = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in diff)
    return out or "the texts are identical"


def regex_find(
    pattern: str, text: str, ignore_case: bool = False, multiline: bool = False, max_matches: int = 100
) -> dict[str, Any]:
    """All matches of a regular expression, with positions and capture groups."""
    regex = _compile(pattern, ignore_case, multiline)
    matches = []
    total = 0
    for m in regex.finditer(_check(text)):
        total += 1
        if len(matches) < max_matches:
            entry: dict[str, Any] = {"match": m.group(0), "start": m.start(), "end": m.end()}
            if regex.groups:
                entry["groups"] = list(m.groups())
            if regex.groupindex:
                entry["named"] = m.groupdict()
            matches.append(entry)
    return {"count": total, "matches": matches, **({"note": f"only the first {max_matches} shown"} if total > max_matches else {})}


def regex_replace(
    pattern: str, replacement: str, text: str, count: int = 0, ignore_case: bool = False, multiline: bool = False
) -> dict[str, Any]:
    """Replace matches of a regular expression (backreferences like \\1 or \\g<name> work)."""
    regex = _compile(pattern, ignore_case, multiline)
    expand = expander(replacement, regex.groups, dict(regex.groupindex))
    result, n = regex.subn(expand, _check(text), count=max(0, count))
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


def _words(text: str) -> list[str]:
    # Split camelCase and snake/kebab separators so every target case gets clean word boundaries.
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", spaced)
    return [w for w in re.split(r"[\s_\-.]+", spaced) if w]


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


_EXTRACT = {
    "emails": r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+",
    "urls": r"https?://[^\s<>\"')\]]+",
    "numbers": r"[-+]?\d+(?:[.,]\d+)*(?:\.\d+)?",
    "dates": r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b",
    "hashtags": r"(?<!\w)#\w+",
    "mentions": r"(?<!\w)@\w+",
    "ip_addresses": r"\b(?:\d{1,3}\.){3}\d{1,3}\b",
    "phone_numbers": r"\+?\d[\d\s().-]{7,}\d",
}


def extract_patterns(text: str, kinds: list[str] | None = None) -> dict[str, list[str]]:
    """Pull emails, URLs, numbers, dates, hashtags, mentions, IPs or phone numbers out of text."""
    _check(text)
    chosen = kinds or list(_EXTRACT)
    unknown = [k for k in chosen if k not in _EXTRACT]
    if unknown:
        raise ValueError(f"unknown kind(s) {unknown}; choose from {', '.join(_EXTRACT)}")
    out = {}
    for kind in chosen:
        found = list(dict.fromkeys(m.group(0).rstrip(".,;") for m in re.finditer(_EXTRACT[kind], text)))
        out[kind] = found[:500]
    return out
