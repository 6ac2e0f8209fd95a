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
Resolution failures (a module that does not import, an `init()` that raises) do not break the registry:
they are kept on the tool's `Binding` and reported when the tool is called.

Trust. A skill file is code: its `handler` names any importable callable (`os:system` included), and
whoever can write skill files can run code in this process. `allowed_modules` (the Executor's
`allowed_handler_modules`) narrows that: an import-path handler outside those modules (and their
submodules) is refused with a `no_handler` result, without importing it. Handlers given as Python
callables (`@tool` functions) were put there by the program itself and are always allowed.
"""

from __future__ import annotations

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


def handler_problem(handler: Any, *, allowed_modules: tuple[str, ...] | None = None) -> str | None:
    """Why `handler` cannot be called (None if it can): not allowed, does not import, not callable.

    For `toolsearch validate`: imports the module but instantiates no class (that is the call's job)."""
    if handler is None or not isinstance(handler, str):
        return None if handler is None or callable(handler) else f"{handler!r} is not callable"
    if not module_allowed(handler, allowed_modules):
        return _refusal(handler, allowed_modules or ())
    try:
        obj, _, _ = resolve_import_path(handler)
    except LookupError as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - a module that raises on import
        return f"importing {handler!r} raised {type(exc).__name__}: {exc}"
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
        self._bindings: dict[str, Binding] = {}
        self._bind_lock = threading.Lock()

    def binding(self, name: str) -> Binding:
        """The binding of tool `name`, resolved (imported, instantiated) on its first call."""
        with self._bind_lock:  # one import/instantiation per tool even under concurrent first calls
            if self.closed:  # the executor closed under this call: create no new instance
                return Binding(self.tools[name], None, "the executor was closed")
            if name not in self._bindings:
                self._bindings[name] = self._bind(self.tools[name])
            return self._bindings[name]

    def _instance(self, cls: type) -> Any:
        if cls not in self.instances:
            instance = cls()
            init = getattr(instance, "init", None)
            if callable(init):
                init()
            self.instances[cls] = instance
        return self.instances[cls]

    def _bind(self, tool: Tool) -> Binding:
        handler = tool.handler
        if handler is None:
            return Binding(tool, None, "it is search-only: its catalog gives it no handler to run")
        where = f"its handler {handler!r}" if isinstance(handler, str) else "its handler"
        if isinstance(handler, str) and not module_allowed(handler, self.allowed_modules):
            return Binding(tool, None, _refusal(handler, self.allowed_modules or ()))
        try:
            target = self._target(handler)
        except Exception as exc:  # an import or init() failure must not break the registry
            # No traceback at warning level: with no logging configured Python prints warnings to
            # stderr, and a CLI user needs the one-line reason (in the result), not a stack.
            log.warning("tool %r: %s cannot be used: %s", tool.name, where, exc)
            log.debug("tool %r: handler resolution failed", tool.name, exc_info=True)
            return Binding(tool, None, f"{where} cannot be used: {type(exc).__name__}: {exc}")
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
            closer = getattr(instance, "close", None) or getattr(instance, "destroy", None)
            if callable(closer):
                try:
                    closer()
                except Exception:  # one bad close() must not keep the others open
                    log.exception("close() of %s (skill %r) failed", type(instance).__name__,
                                  self.skill.name)


class Lease:
    """A use of one binding; the skill load's instances stay open while any hold is retained."""

    def __init__(self, owner: HandlerSet, load: _SkillLoad, binding: Binding):
        self._owner = owner
        self._load = load
        self.binding = binding

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
        release = Lease(self, load, None)._adopt()  # type: ignore[arg-type]
        try:
            lease = Lease(self, load, load.binding(tool_name))  # imports on the first call only
            yield lease
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
