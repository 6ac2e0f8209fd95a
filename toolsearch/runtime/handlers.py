"""Resolving `Tool.handler` to something callable, and the lifecycle of class-based handlers.

A handler is `None` (search-only), a callable (an `@tool` `ToolFunction`, a plain function, a class), or
an import path:

    pkg.mod:function        a function, called with the arguments as keywords
    pkg.mod:Class           one instance per skill load; calls go to `instance(**args)`, or to
                            `instance.execute(**args)` when the class has no `__call__` (seed 000)
    pkg.mod:Class.method    the method of that one instance: several tools of a skill can share
                            one object (a database connection, an HTTP session)

`HandlerSet` follows a `Registry`. A handler is imported (and a class handler instantiated, its `init()`
called) when one of its tools is first called in that skill load, never when the skill loads: loading or
searching a catalog runs no code from it. When the skill is replaced or removed its instances are
retired and `close()` (or the seed's `destroy()`) is called once no call is still using them, so a
reload never pulls an object out from under a running call; the next call binds the new version.
Resolution failures (a module that does not import, an `init()` that raises, even `SystemExit` or
another `BaseException`) do not break the registry: they are kept on the tool's `Binding` and reported
when the tool is called. Resolution runs in its own thread (`Lease.resolution()`), once per tool and
skill load, so the executor can bound it by the tool's timeout: a module that imports for a minute or
an `init()` that hangs fails its own calls on time and holds up no other tool's.

`isolation: process` tools are not imported here at all: their binding names the handler, and the
worker process (`isolation`) imports and calls it, so not even import-time code runs in this process.

Trust. A skill file is code: its `handler` names any importable callable (`os:system` included), and
whoever can write skill files can run code in this process. `allowed_modules` (the Executor's
`allowed_handler_modules`) narrows that: an import-path handler outside those modules (and their
submodules) is refused with a `no_handler` result, without importing it. Handlers given as Python
callables (`@tool` functions) were put there by the program itself and are always allowed.
"""

from __future__ import annotations

import concurrent.futures
import importlib
import inspect
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..catalog.model import Skill, Tool
from ..catalog.registry import Catalog, Registry
from .result import describe_exception

__all__ = ["Binding", "HandlerSet", "Lease", "handler_problem", "module_allowed", "resolve_import_path"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Binding:
    """How to call one tool of one skill load."""

    tool: Tool
    target: Callable[..., Any] | None  # None when `error` says why it cannot be called
    error: str = ""
    is_async: bool = False
    wants_context: bool = False
    tool_function: bool = False  # an @tool ToolFunction: validate() + invoke(arguments, context=)
    accepted: frozenset[str] | None = None  # keyword names a plain callable takes; None = any
    isolated: bool = False  # `isolation: process`: `target` is the handler, run in a worker process


def resolve_import_path(path: str) -> tuple[Any, type | None, str]:
    """Import `pkg.mod:attr.path`; returns (object, owning class or None, attribute name in it).

    The owning class is set when the path goes through a class to a plain function defined on it
    (`mod:Class.method`), which then needs an instance.
    """
    module_name, _, attr_path = path.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise LookupError(f"cannot import module {module_name!r} ({exc})") from exc
    owner: type | None = None
    parts = attr_path.split(".")
    for i, part in enumerate(parts):
        try:
            attr = inspect.getattr_static(obj, part) if isinstance(obj, type) else getattr(obj, part)
        except AttributeError:
            raise LookupError(f"{'.'.join([module_name, *parts[:i]])} has no attribute {part!r}") from None
        is_last = i == len(parts) - 1
        if isinstance(obj, type) and is_last and inspect.isfunction(attr):
            owner = obj  # a plain method: bind it to the skill's instance later
        elif isinstance(attr, (staticmethod, classmethod)):
            attr = getattr(obj, part)
        obj = attr
    return obj, owner, parts[-1]


def module_allowed(handler: str, allowed_modules: tuple[str, ...] | None) -> bool:
    """Whether the import path's module is one of `allowed_modules` or inside one (None: any)."""
    if allowed_modules is None:
        return True
    module = handler.partition(":")[0]
    return any(module == m or module.startswith(m + ".") for m in allowed_modules)


def _refusal(handler: str, allowed_modules: tuple[str, ...]) -> str:
    shown = ", ".join(allowed_modules) or "none"
    return (f"its handler {handler!r} is outside the allowed handler modules ({shown}); "
            "allow its module with allowed_handler_modules")


def handler_problem(handler: Any, *, allowed_modules: tuple[str, ...] | None = None,
                    isolated: bool = False) -> str | None:
    """Why `handler` cannot be called (None if it can): not allowed, does not import, not callable, or
    (`isolated`: the tool is `isolation: process`) not a function named by import path.

    For `toolsearch validate`: imports the module but instantiates no class (that is the call's job)."""
    if handler is not None and isolated and not isinstance(handler, str):
        return "is a Python object; isolation: process runs a function named by its import path"
    if handler is None or not isinstance(handler, str):
        return None if handler is None or callable(handler) else f"{handler!r} is not callable"
    if not module_allowed(handler, allowed_modules):
        return _refusal(handler, allowed_modules or ())
    try:
        obj, _, _ = resolve_import_path(handler)
    except LookupError as exc:
        return str(exc)
    except KeyboardInterrupt:  # the user's Ctrl-C while `validate` imports: stop, as asked
        raise
    except BaseException as exc:  # noqa: BLE001 - a module that raises (even SystemExit) on import
        return f"importing {handler!r} raised {describe_exception(exc)}"
    if isinstance(obj, type) and isolated:
        return (f"class {obj.__qualname__} cannot run in a worker process (isolation: process runs functions "
                "only; a class keeps its instance in this process): use a function, or isolation: thread")
    if isinstance(obj, type):
        defined = {name for cls in obj.__mro__[:-1] for name in vars(cls)}  # object's own excluded
        if "__call__" in defined or "execute" in defined:
            return None
        return f"class {obj.__qualname__} has neither __call__ nor execute()"
    return None if callable(obj) else f"{handler!r} is not callable"


def _is_async(fn: Any) -> bool:
    for candidate in (fn, getattr(fn, "__call__", None), getattr(fn, "fn", None),
                      getattr(fn, "func", None), getattr(fn, "__wrapped__", None)):
        if candidate is not None and inspect.iscoroutinefunction(candidate):
            return True
    return False


def _signature_facts(fn: Callable[..., Any]) -> tuple[bool, frozenset[str] | None]:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # builtins without a signature: pass arguments through
        return False, None
    wants_context = "context" in params
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return wants_context, None
    names = frozenset(
        n for n, p in params.items()
        if n != "context" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    )
    return wants_context, names


class _SkillLoad:
    """One load of one skill: its bindings, its class instances, and how many calls use them."""

    def __init__(self, skill: Skill, allowed_modules: tuple[str, ...] | None = None):
        self.skill = skill
        self.allowed_modules = allowed_modules
        self.instances: dict[type, Any] = {}
        self.active = 0
        self.retired = False
        self.closed = False
        self.tools = {t.name: t for t in skill.tools}
        self._bindings: dict[str, concurrent.futures.Future[Binding]] = {}
        self._bind_lock = threading.Lock()  # guards _bindings and closed: never held while importing
        self._class_locks: dict[type, threading.Lock] = {}  # one instance per class, even for tools
        # resolved at once; per class, so a hanging init() holds up only the tools of its own class

    def resolution(self, name: str) -> concurrent.futures.Future[Binding]:
        """The binding of tool `name`, resolved (imported, instantiated) in a thread of its own on the
        first call; later calls share that future. It never raises: failures are in the binding."""
        with self._bind_lock:
            future = self._bindings.get(name)
            if future is not None:
                return future
            future = concurrent.futures.Future()
            future.set_running_or_notify_cancel()  # a waiter that gives up cannot cancel it for others
            if self.closed:  # the executor closed under this call: create no new instance
                future.set_result(Binding(self.tools[name], None, "the executor was closed"))
                return future
            self._bindings[name] = future
        tool = self.tools[name]
        if tool.isolation == "process":  # nothing to import here: the worker process does it
            future.set_result(self._bind(tool))
            return future
        try:
            threading.Thread(target=self._resolve, args=(tool, future), daemon=True,
                             name=f"toolsearch-resolve-{name}").start()
        except RuntimeError as exc:  # can't start new thread: this call fails, a later one retries
            with self._bind_lock:
                self._bindings.pop(name, None)
            future.set_result(Binding(tool, None, f"no thread to import its handler in ({exc})"))
        return future

    def binding(self, name: str) -> Binding:
        """The binding of tool `name`, waiting for its resolution (no time limit: the executor bounds
        it with `resolution()` instead)."""
        return self.resolution(name).result()

    def _resolve(self, tool: Tool, future: concurrent.futures.Future[Binding]) -> None:
        try:
            binding = self._bind(tool)
        except BaseException as exc:  # noqa: BLE001 - nothing may escape a resolver thread unanswered
            binding = Binding(tool, None, f"its handler cannot be used: {describe_exception(exc)}")
        future.set_result(binding)

    def _instance(self, cls: type) -> Any:
        with self._bind_lock:
            lock = self._class_locks.setdefault(cls, threading.Lock())
        with lock:
            if cls not in self.instances:
                instance = cls()
                init = getattr(instance, "init", None)
                if callable(init):
                    init()
                with self._bind_lock:
                    closed = self.closed
                    if not closed:
                        self.instances[cls] = instance
                if closed:  # unloaded while init() ran: nobody else will close this instance
                    _close_instance(instance, self.skill.name)
                    raise RuntimeError("its skill was unloaded while the handler was initialized")
            return self.instances[cls]

    def _bind(self, tool: Tool) -> Binding:
        handler = tool.handler
        if handler is None:
            return Binding(tool, None, "it is search-only: its catalog gives it no handler to run")
        where = f"its handler {handler!r}" if isinstance(handler, str) else "its handler"
        if isinstance(handler, str) and not module_allowed(handler, self.allowed_modules):
            return Binding(tool, None, _refusal(handler, self.allowed_modules or ()))
        if tool.isolation == "process":
            # Not imported here: the worker process does that. `context` is supplied by the worker
            # when the function takes it, so the model may not pass one (wants_context=True).
            return Binding(tool, handler, wants_context=True, isolated=True)
        try:
            target = self._target(handler)
        except BaseException as exc:  # noqa: BLE001 - an import or init() failure (even SystemExit)
            # must not break the registry or the executor. No traceback at warning level: with no
            # logging configured Python prints warnings to stderr, and a CLI user needs the one-line
            # reason (in the result), not a stack.
            log.warning("tool %r: %s cannot be used: %s", tool.name, where, describe_exception(exc))
            log.debug("tool %r: handler resolution failed", tool.name, exc_info=True)
            return Binding(tool, None, f"{where} cannot be used: {describe_exception(exc)}")
        if hasattr(target, "invoke") and hasattr(target, "validate"):
            return Binding(tool, target, is_async=_is_async(target), tool_function=True)
        wants_context, accepted = _signature_facts(target)
        return Binding(tool, target, is_async=_is_async(target),
                       wants_context=wants_context, accepted=accepted)

    def _target(self, handler: Any) -> Callable[..., Any]:
        if isinstance(handler, str):
            obj, owner, attr = resolve_import_path(handler)
            if owner is not None:
                return getattr(self._instance(owner), attr)
        else:
            obj = handler
        if isinstance(obj, type):
            instance = self._instance(obj)
            if callable(instance):
                return instance
            if callable(getattr(instance, "execute", None)):
                return instance.execute
            raise TypeError(f"class {obj.__qualname__} has neither __call__ nor execute()")
        if not callable(obj):
            raise TypeError(f"{obj!r} is not callable")
        return obj

    def close(self) -> None:
        with self._bind_lock:
            if self.closed:
                return
            self.closed = True
            instances = list(self.instances.values())
        for instance in instances:
            _close_instance(instance, self.skill.name)


def _close_instance(instance: Any, skill: str) -> None:
    closer = getattr(instance, "close", None) or getattr(instance, "destroy", None)
    if callable(closer):
        try:
            closer()
        except BaseException:  # noqa: BLE001 - one bad close() (even SystemExit) must not keep the
            # others open, nor escape from Executor.close() or a reload
            log.exception("close() of %s (skill %r) failed", type(instance).__name__, skill)


class Lease:
    """A use of one tool of one skill load; the load's instances stay open while any hold is retained."""

    def __init__(self, owner: HandlerSet, load: _SkillLoad, tool: Tool):
        self._owner = owner
        self._load = load
        self.tool = tool

    def resolution(self) -> concurrent.futures.Future[Binding]:
        """The tool's binding, resolving in its own thread on the first call (see `_SkillLoad`)."""
        return self._load.resolution(self.tool.name)

    @property
    def binding(self) -> Binding:
        """The binding, waiting for it without a time limit (the executor waits on `resolution()`)."""
        return self._load.binding(self.tool.name)

    def retain(self) -> Callable[[], None]:
        """Take one more hold; returns its (idempotent) release function."""
        self._owner._hold(self._load)
        return self._adopt()

    def _adopt(self) -> Callable[[], None]:
        """The release function of a hold taken by `HandlerSet.acquire`."""
        released = threading.Event()

        def release() -> None:
            if not released.is_set():
                released.set()
                self._owner._release(self._load)

        return release


class HandlerSet:
    """The bindings of every loaded skill, kept in step with a Registry."""

    def __init__(self, registry: Registry, *, allowed_modules: tuple[str, ...] | None = None):
        self._allowed = tuple(allowed_modules) if allowed_modules is not None else None
        self._lock = threading.Lock()
        self._loads: dict[str, _SkillLoad] = {}
        self._tools: dict[str, _SkillLoad] = {}
        self._closed = False
        with self._lock:
            self._apply(registry.catalog)
        registry.subscribe(self._on_change)

    def _on_change(self, old: Catalog, new: Catalog) -> None:
        with self._lock:
            if not self._closed:
                self._apply(new)

    def _apply(self, catalog: Catalog) -> None:
        loads: dict[str, _SkillLoad] = {}
        for skill in catalog.skills:
            current = self._loads.get(skill.name)
            # Identity, not equality: a put() of an equal skill is still a reload (fresh instances).
            same = current is not None and current.skill is skill
            loads[skill.name] = current if same else _SkillLoad(skill, self._allowed)  # type: ignore[assignment]
        for name, load in self._loads.items():
            if loads.get(name) is not load:
                self._retire(load)
        self._loads = loads
        self._tools = {t: load for load in loads.values() for t in load.tools}

    def _retire(self, load: _SkillLoad) -> None:
        load.retired = True
        if load.active == 0:
            load.close()

    def names(self) -> list[str]:
        return list(self._tools)

    @contextmanager
    def acquire(self, tool_name: str) -> Iterator[Lease | None]:
        """A lease on the binding of `tool_name` (None if unknown), valid until the block ends.

        Work that may outlive the block (a sync handler thread abandoned on timeout) takes its own
        hold with `lease.retain()`, so the instance is not closed while that thread still runs.
        """
        with self._lock:  # find and hold in one step, so a concurrent reload cannot close it between
            load = None if self._closed else self._tools.get(tool_name)
            if load is not None:
                load.active += 1
        if load is None:
            yield None
            return
        lease = Lease(self, load, load.tools[tool_name])
        release = lease._adopt()
        try:
            yield lease  # the handler is imported on the first lease.resolution() only
        finally:
            release()

    def _hold(self, load: _SkillLoad) -> None:
        with self._lock:
            load.active += 1

    def _release(self, load: _SkillLoad) -> None:
        with self._lock:
            load.active -= 1
            done = load.retired and load.active == 0
        if done:
            load.close()

    def close(self) -> None:
        """Close every instance now, in use or not (the executor is going away)."""
        with self._lock:
            self._closed = True
            loads, self._loads, self._tools = list(self._loads.values()), {}, {}
        for load in loads:
            load.retired = True
            load.close()
