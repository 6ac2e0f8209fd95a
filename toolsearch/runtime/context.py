"""What a running tool may know about its surroundings.

A handler that declares a parameter named `context` gets a `ToolContext`; that parameter is never part
of the tool's input schema and the model never sees it. Built-in skills use it for the workspace root
(file tools), per-session state (the todo plan), the shell switch, and `allow_hosts`: the local or
private hosts the http tools may reach (host names, IP addresses or CIDR networks; by default only
public addresses are reached). These are the operator's settings: the model can change none of them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["ToolContext"]


@dataclass
class ToolContext:
    workspace: Path = field(default_factory=Path.cwd)
    state: dict[str, Any] = field(default_factory=dict)  # per-session, shared by all tools
    allow_shell: bool = False
    session_id: str = "default"
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False)
    allow_hosts: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self.workspace = Path(self.workspace).resolve()
        if isinstance(self.allow_hosts, str):  # one host given as a string, not its characters
            self.allow_hosts = (self.allow_hosts,)
        self.allow_hosts = tuple(self.allow_hosts)
