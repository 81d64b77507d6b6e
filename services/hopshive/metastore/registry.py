"""Store backends by name, imported only when chosen (pyiceberg's catalog registry idea):
a missing driver becomes an error naming the package extra to install."""

from __future__ import annotations

import importlib
from typing import Callable

from .store import RawStore

# name -> (module:attribute, pip extra that brings its driver)
BACKENDS: dict[str, tuple[str, str]] = {
    "mysql": ("hopshive.metastore.stores.mysql_store:MySQLStore", "hopshive[fast] (mysqlclient)"),
    "hbase": ("hopshive.metastore.stores.hbase_store:HBaseStore", "hopshive[hbase] (happybase)"),
}


class BackendError(RuntimeError):
    pass


def backend(name: str) -> Callable[..., RawStore]:
    """The store class registered as ``name``.

    Raises:
        BackendError: unknown name, or its module (or driver) cannot be imported.
    """
    if name not in BACKENDS:
        raise BackendError(f"unknown metastore backend {name!r} (known: {', '.join(sorted(BACKENDS))})")
    target, extra = BACKENDS[name]
    module_name, attribute = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise BackendError(f"metastore backend {name!r} is not part of this release") from exc
        raise BackendError(f"metastore backend {name!r} needs {exc.name!r}: pip install {extra}") from exc
    return getattr(module, attribute)
