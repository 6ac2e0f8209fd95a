"""Usage memory: what the model called after each search, and the ranking learned from it.

records.py  the interchange format (`{"query": str, "tools": [names]}` per line) and its reader
store.py    the store protocol and its local default, an append-only, bounded JSONL file
learned.py  the evidence `toolsearch learn` folds in, per tool and profile, beside the index
ranking.py  how a search ranks with it
recorder.py what wrap(usage=...), the Executor and the gateway record
"""

from .learned import DEFAULT_PROFILE, FoldReport, LearnedEvidence, learned_path
from .records import UsageRecord, iter_records
from .store import JsonlUsageStore, UsageStore, open_usage_store

__all__ = ["DEFAULT_PROFILE", "FoldReport", "JsonlUsageStore", "LearnedEvidence", "UsageRecord",
           "UsageStore", "iter_records", "learned_path", "open_usage_store"]
