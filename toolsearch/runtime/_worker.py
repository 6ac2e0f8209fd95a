"""The worker process of `isolation: process` tools (its parent side is `isolation.py`).

Started as `python -c <boot> SYS_PATH READ_FD WRITE_FD MEMORY CPU`: it sets its memory bound (RLIMIT_AS,
so an allocation past it raises `MemoryError`) and a CPU-time bound (RLIMIT_CPU: a worker orphaned
while spinning, e.g. after its parent was SIGKILLed, dies by itself), then serves one request at a time
from READ_FD until that pipe closes. A request is a pickle of (handler, arguments, context fields,
max_output_chars, the parent's sys.path, tool name, deadline); a reply is a pickle of plain values only (the parent
unpickles no classes):

    ("ok", text, data_pickle_or_None, is_error, error_kind, cpu_seconds)
    ("raised", type_name, message, retryable, cpu_seconds)
    ("unconvertible", message, cpu_seconds)

Everything a handler raises, `SystemExit` and other `BaseException`s included, becomes a reply: only
the parent ends this process (at the call's timeout, by killing its process group).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import pickle
import resource
import sys
from multiprocessing.connection import Connection
from typing import Any

from .context import ToolContext
from .process import CallScope, set_scope
from .result import ToolResult, capped, describe_exception, to_text
from .retry import is_retryable

MAX_DATA_BYTES = 8 * 2**20  # structured data past this comes back as text only


def main(argv: list[str]) -> None:
    read_fd, write_fd, memory, cpu = (int(a) for a in argv)
    if memory > 0:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    if cpu > 0:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
    inbox, outbox = Connection(read_fd, writable=False), Connection(write_fd, readable=False)
    functions: dict[Any, tuple[Any, bool]] = {}
    while True:
        try:
            request = inbox.recv_bytes()
        except (EOFError, OSError):  # the parent closed the pipe or died: nothing more to do
            return
        outbox.send_bytes(serve(request, functions))


def serve(request: bytes, functions: dict[Any, tuple[Any, bool]]) -> bytes:
    try:
        handler, arguments, context_fields, max_output_chars, path, tool, deadline = pickle.loads(request)
        set_scope(CallScope(tool, deadline))  # time.monotonic() is the same clock in every process
        if path != sys.path:  # the parent's path now (an app may add folders after the worker started)
            sys.path[:] = path
            importlib.invalidate_caches()
        function, takes_context = _function(handler, functions)
        kwargs = {k: v for k, v in arguments.items() if k != "context"}
        if takes_context:
            kwargs["context"] = ToolContext(**context_fields)
        value = function(**kwargs)
        if inspect.isawaitable(value):
            value = asyncio.run(_awaited(value))
    except BaseException as exc:  # noqa: BLE001 - SystemExit, GeneratorExit...: all are the call's failure
        return _reply("raised", type(exc).__name__, describe_exception(exc), is_retryable(exc))
    try:
        result = value if isinstance(value, ToolResult) else ToolResult(
            text=to_text(value), data=None if isinstance(value, str) else value)
        result = capped(result, max_output_chars)
    except BaseException as exc:  # noqa: BLE001 - circular, too deep, __str__ raising...
        return _reply("unconvertible", describe_exception(exc, 300))
    data = None
    if result.data is not None:
        try:
            data = pickle.dumps(result.data, protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException:  # noqa: BLE001 - not picklable: the text still answers the call
            data = None
        if data is not None and len(data) > MAX_DATA_BYTES:
            data = None
    return _reply("ok", result.text, data, result.is_error, result.error_kind)


def _reply(*values: Any) -> bytes:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return pickle.dumps((*values, usage.ru_utime + usage.ru_stime), protocol=pickle.HIGHEST_PROTOCOL)


async def _awaited(value: Any) -> Any:
    return await value


def _function(handler: Any, functions: dict[Any, tuple[Any, bool]]) -> tuple[Any, bool]:
    """(function, takes context) for an import path `pkg.mod:name` or a function pickled by reference."""
    key = handler if isinstance(handler, str) else id(handler)
    if key in functions:
        return functions[key]
    obj = handler
    if isinstance(handler, str):
        module_name, _, attr_path = handler.partition(":")
        obj = importlib.import_module(module_name)
        for part in attr_path.split("."):
            obj = getattr(obj, part)
    if isinstance(obj, type) or not callable(obj):
        raise TypeError(f"isolation: process runs functions; {handler!r} is "
                        f"{'a class' if isinstance(obj, type) else 'not callable'}")
    if hasattr(obj, "func") and hasattr(obj, "validate"):  # an @tool ToolFunction: its function
        function, takes_context = obj.func, bool(getattr(obj, "takes_context", False))
    else:
        function = obj
        try:
            takes_context = "context" in inspect.signature(function).parameters
        except (TypeError, ValueError):
            takes_context = False
    functions[key] = (function, takes_context)
    return functions[key]


if __name__ == "__main__":  # pragma: no cover - started by isolation.py with -c
    main(sys.argv[1:])
