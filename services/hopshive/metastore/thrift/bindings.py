"""Which generated classes read a call's arguments and write its result.

The Hive 3.1 IDL (``pymetastore``) covers Hive 2.3 clients too: it only adds optional
fields and methods, except where ``errors.FIELD_FOR_ERRORS`` says otherwise.  fb303's
methods (Hive 2's service base) come from ``hmsclient``'s bindings.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from hmsclient.genthrift.fb303 import FacebookService
from pymetastore.hive_metastore import ThriftHiveMetastore


@dataclass(frozen=True)
class Method:
    name: str
    args: type
    result: type | None          # None for oneway calls

    @property
    def arg_names(self) -> list[str]:
        return [spec[2] for spec in self.args.thrift_spec if spec is not None]


def _methods(module) -> dict[str, Method]:
    found = {}
    for attribute in dir(module.Processor):
        if attribute.startswith("process_"):
            name = attribute[len("process_"):]
            args = getattr(module, f"{name}_args", None)
            if args is not None:
                found[name] = Method(name, args, getattr(module, f"{name}_result", None))
    return found


@lru_cache(maxsize=1)
def idl_methods() -> dict[str, Method]:
    """Every method of the IDLs we speak, by name (Hive 3.1 over fb303)."""
    methods = _methods(FacebookService)
    methods.update(_methods(ThriftHiveMetastore))
    return methods
