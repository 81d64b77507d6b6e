"""Which generated classes read a call's arguments and write its result.

The Hive 3.1 IDL (``pymetastore``) covers Hive 2.3 clients too: it only adds optional
fields and methods, except where ``errors.FIELD_FOR_ERRORS`` says otherwise.  fb303's
methods (Hive 2's service base) and the index methods Hive 3 removed (``add_index``,
``get_indexes``, ...) come from ``hmsclient``'s Hive 2 bindings.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from hmsclient.genthrift.fb303 import FacebookService
from hmsclient.genthrift.hive_metastore import ThriftHiveMetastore as Hive2Metastore
from pymetastore.hive_metastore import ThriftHiveMetastore


# Served from the Hive 2 IDL: Hive 3.1 dropped them (HIVE-18448).
HIVE2_ONLY = ("add_index", "alter_index", "drop_index_by_name", "get_index_by_name", "get_indexes",
              "get_index_names")


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
    """Every method of the IDLs we speak, by name (Hive 3.1 over fb303, and the Hive 2
    methods that Hive 3.1 no longer has)."""
    methods = _methods(FacebookService)
    hive2 = _methods(Hive2Metastore)
    methods.update({name: hive2[name] for name in HIVE2_ONLY})
    methods.update(_methods(ThriftHiveMetastore))
    return methods
