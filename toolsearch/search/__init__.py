"""Answering a search call: its arguments (`arguments`) and the one policy that searches and loads its
hits (`answer`), shared by the interceptor and the MCP gateway."""

from .answer import NO_MATCH, Found, Holder, Loaded, Need, answer_searches, budget_note, search_and_load
from .arguments import MAX_NEEDS, BadSearchArguments, SearchArgs, parse_search_arguments, read_search_arguments, \
    search_schema

__all__ = ["MAX_NEEDS", "NO_MATCH", "BadSearchArguments", "Found", "Holder", "Loaded", "Need", "SearchArgs",
           "answer_searches", "budget_note", "parse_search_arguments", "read_search_arguments",
           "search_and_load", "search_schema"]
