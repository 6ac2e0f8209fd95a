"""The Snowball English (Porter2) stemmer of `whoosh.lang.porter2`, the same function, faster.

Stemming is the largest single cost of analysing a catalog (every distinct token of a build is
stemmed once, ~25k at 10k tools, ~115k at 100k), and whoosh's implementation spends most of its time
calling helpers: `step_2` alone tries 24 suffixes through a helper call each, and R1 is computed three
times per word. This module is a line-by-line port of whoosh-reloaded 2.7's `porter2.stem` with the
helpers inlined, R1 computed once, and the suffix lists of steps 2 and 3 (ordered longest first, so the
first suffix that matches is the only one of its length that can) looked up by the word's last 7..2
characters in a dict. Its quirks are kept on purpose, not fixed (e.g. step 4 takes the first suffix of
its list, not the longest; an empty result of a step-2 or step-3 rule lets the next rule try), because
the index and every query must stem exactly as before: tests/test_index_stemmer.py compares it with
whoosh's on every word of the benchmark catalogs and queries and on generated suffix combinations.
"""

from __future__ import annotations

import re

__all__ = ["stem"]

# whoosh's pattern ends in `(\w*)` and takes its start: `\w*` cannot fail, so that is this match's end.
_R = re.compile(r"[^aeiouy]*[aeiouy]+[^aeiouy]")
_EWSS1 = re.compile(r"^[aeiouy][^aeiouy]$")
_EWSS2 = re.compile(r".*[^aeiouy][aeiouy][^aeiouywxY]$")
_CCY = re.compile(r"([aeiouy])y")
_S1A = re.compile(r"[aeiouy].")
_S1B = re.compile(r"[aeiouy]")

_DOUBLES = ("bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt")
_S1B_SUFFIXES = ("ed", "edly", "ing", "ingly")  # whoosh's order: the first that matches decides

# Steps 2 and 3: suffix -> (replacement, letters one of which must precede it (() = any), whether the
# suffix must be in R2 too; it must always be in R1).
_Rule = tuple[str, tuple[str, ...], bool]
_S2: dict[str, _Rule] = {
    "ization": ("ize", (), False), "ational": ("ate", (), False), "fulness": ("ful", (), False),
    "ousness": ("ous", (), False), "iveness": ("ive", (), False), "tional": ("tion", (), False),
    "biliti": ("ble", (), False), "lessli": ("less", (), False), "entli": ("ent", (), False),
    "ation": ("ate", (), False), "alism": ("al", (), False), "aliti": ("al", (), False),
    "ousli": ("ous", (), False), "iviti": ("ive", (), False), "fulli": ("ful", (), False),
    "enci": ("ence", (), False), "anci": ("ance", (), False), "abli": ("able", (), False),
    "izer": ("ize", (), False), "ator": ("ate", (), False), "alli": ("al", (), False),
    "bli": ("ble", (), False), "ogi": ("og", ("l",), False),
    "li": ("", ("c", "d", "e", "g", "h", "k", "m", "n", "r", "t"), False),
}
_S2_LENGTHS = (7, 6, 5, 4, 3, 2)
_S3: dict[str, _Rule] = {
    "ational": ("ate", (), False), "tional": ("tion", (), False), "alize": ("al", (), False),
    "icate": ("ic", (), False), "iciti": ("ic", (), False), "ative": ("", (), True),
    "ical": ("ic", (), False), "ness": ("", (), False), "ful": ("", (), False),
}
_S3_LENGTHS = (7, 6, 5, 4, 3)
_S2_SUFFIXES, _S3_SUFFIXES = tuple(_S2), tuple(_S3)
_S4_DELETE = ("al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ism", "ate",
              "iti", "ous", "ive", "ize")  # whoosh's order: the first that matches decides

_EXCEPTIONAL = {
    "skis": "ski", "skies": "sky", "dying": "die", "lying": "lie", "tying": "tie", "idly": "idl",
    "gently": "gentl", "ugly": "ugli", "early": "earli", "only": "onli", "singly": "singl", "sky": "sky",
    "news": "news", "howe": "howe", "atlas": "atlas", "cosmos": "cosmos", "bias": "bias", "andes": "andes",
}
_EARLY_EXIT_POST_1A = frozenset(("inning", "outing", "canning", "herring", "earring", "proceed", "exceed",
                                 "succeed"))


def _r1(word: str) -> int:
    if word.startswith(("gener", "arsen")):
        return 5
    if word.startswith("commun"):
        return 6
    match = _R.match(word)
    return match.end() if match else len(word)


def _suffix_rules(word: str, rules: dict[str, _Rule], suffixes: tuple[str, ...], lengths: tuple[int, ...],
                  r1: int, r2: int) -> str:
    """whoosh's step_2 / step_3: the rules in order, longest suffix first; the first whose suffix
    ends `word` decides (the word unchanged when its conditions fail), unless its result is ""."""
    if not word.endswith(suffixes):  # most words end with none of them: one C call
        return word
    size = len(word)
    for n in lengths:
        if size < n:
            continue
        rule = rules.get(word[-n:])
        if rule is None:
            continue
        repl, prev, needs_r2 = rule
        base = word[:-n]
        ok = size - n >= r1 and (not prev or base.endswith(prev)) and (not needs_r2 or size - n >= r2)
        attempt = base + repl if ok else word
        if attempt:
            return attempt
    return word


def _short_syllable_end(word: str) -> bool:
    return bool((len(word) == 2 and _EWSS1.match(word)) or _EWSS2.match(word))


def stem(word: str) -> str:
    """`whoosh.lang.porter2.stem(word)`."""
    if len(word) <= 2:
        return word
    if word.startswith("'"):
        word = word[1:]
    exceptional = _EXCEPTIONAL.get(word)
    if exceptional is not None:
        return exceptional

    # Consonant y's capitalized.
    if word.startswith("y"):
        word = "Y" + word[1:]
    if "y" in word:
        word = _CCY.sub(r"\g<1>Y", word)
    r1 = _r1(word)
    match = _R.match(word, r1)
    r2 = match.end() if match else len(word)

    # Step 0.
    if word.endswith("'s'"):
        word = word[:-3]
    elif word.endswith("'s"):
        word = word[:-2]
    elif word.endswith("'"):
        word = word[:-1]

    # Step 1a.
    if word.endswith("sses"):
        word = word[:-4] + "ss"
    elif word.endswith(("ied", "ies")):
        word = word[:-3] + ("i" if len(word) > 4 else "ie")
    elif word.endswith(("us", "ss")):
        pass
    elif word.endswith("s"):
        if _S1A.search(word, 0, len(word) - 1):
            word = word[:-1]

    if word in _EARLY_EXIT_POST_1A:
        return word

    # Step 1b.
    if word.endswith("eedly"):
        if len(word) - 5 >= r1:
            word = word[:-3]
    elif word.endswith("eed"):
        if len(word) - 3 >= r1:
            word = word[:-1]
    else:
        for suffix in _S1B_SUFFIXES:
            if word.endswith(suffix):
                preceding = word[:-len(suffix)]
                if _S1B.search(preceding):
                    if preceding.endswith(("at", "bl", "iz")):
                        word = preceding + "e"
                    elif preceding.endswith(_DOUBLES):
                        word = preceding[:-1]
                    elif _short_syllable_end(preceding) and _r1(preceding) == len(preceding):
                        word = preceding + "e"
                    else:
                        word = preceding
                break

    # Step 1c (whoosh's precedence: `endswith('y') or (endswith('Y') and len > 1)`).
    if word.endswith("y") or word.endswith("Y") and len(word) > 1:
        if word[-2] not in "aeiouy":
            if len(word) > 2:
                word = word[:-1] + "i"

    # Steps 2 and 3: the first rule (longest suffix) that matches decides, unless it yields "".
    word = _suffix_rules(word, _S2, _S2_SUFFIXES, _S2_LENGTHS, r1, r2)
    word = _suffix_rules(word, _S3, _S3_SUFFIXES, _S3_LENGTHS, r1, r2)

    # Step 4.
    if word.endswith(_S4_DELETE):
        for end in _S4_DELETE:
            if word.endswith(end):
                if len(word) - len(end) >= r2:
                    word = word[:-len(end)]
                break
    elif word.endswith(("sion", "tion")) and len(word) - 3 >= r2:
        word = word[:-3]

    # Step 5.
    if word.endswith("l"):
        if len(word) - 1 >= r2 and word[-2] == "l":
            word = word[:-1]
    elif word.endswith("e"):
        if len(word) - 1 >= r2 or (len(word) - 1 >= r1 and not _short_syllable_end(word[:-1])):
            word = word[:-1]

    return word.replace("Y", "y")
