"""The Thrift handler: one method per Hive metastore call, each a few lines that unpack the
request, apply ``policy`` and call the store.  Split by object kind."""

from .base import HandlerBase, Session
from .databases import DatabaseCalls
from .indexes import IndexCalls
from .misc import MiscCalls
from .partitions import PartitionCalls
from .tables import TableCalls
from .tokens import TokenCalls


class Handler(DatabaseCalls, TableCalls, PartitionCalls, IndexCalls, MiscCalls, TokenCalls, HandlerBase):
    pass


__all__ = ["Handler", "Session"]
