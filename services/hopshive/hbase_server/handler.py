"""The Thrift1 ``Hbase`` service on top of ``storage`` and ``filters``.  Methods take and
return the IDL's structs (``api`` is the IDL module loaded by ``wire``); errors are the
library's exceptions, mapped to the wire in one place (``wire.ErrorMapping``).

Read semantics, as HBase's Thrift1 server has them: gets and scans return the newest
version of each selected column (``getVer*``: up to ``numVersions``); a ``*Ts`` read sees
only versions older than the timestamp; a column spec is ``family`` (all of it) or
``family:qualifier``; a scan's rows come in key order from ``startRow`` (inclusive) to
``stopRow`` (exclusive), filtered by ``filterString`` and split into results of at most
``batchSize`` columns.  Scanners live in the server process and expire after
``scanner_lease`` seconds unused (HBase's scanner lease).
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from dataclasses import dataclass, field

from .exceptions import IllegalArgument, NoSuchScanner
from .filterparse import parse_filter
from .filters import Cell, Filter
from .storage import Cells, Family, Mutation, Storage, split_column

log = logging.getLogger("hopshive.hbase")

SCAN_CHUNK = 256          # rows read per storage transaction by a scanner (at most)
FIRST_CHUNK = 16          # ... at first and after a seek, doubling up to SCAN_CHUNK


def select(cells: Cells, columns: list[bytes] | None, before: int | None, versions: int = 1) -> list[Cell]:
    """The cells of ``columns`` (None or empty: all), newest ``versions`` first, older than
    ``before`` when given, as (column, timestamp, value) in column order."""
    wanted = [split_column(c) for c in columns] if columns else None
    out: list[Cell] = []
    for column in sorted(cells):
        if wanted is not None:
            family, _, qualifier = column.partition(b":")
            if not any(f == family and (q is None or q == qualifier) for f, q in wanted):
                continue
        kept = [v for v in cells[column] if before is None or v[0] < before][:versions]
        out.extend((column, ts, value) for ts, value in kept)
    return out


@dataclass
class Scanner:
    table: bytes
    start: bytes
    stop: bytes
    columns: list[bytes] | None
    before: int | None
    filter: Filter | None
    batch: int
    reverse: bool
    sort_columns: bool
    after: bytes | None = None
    pending: list = field(default_factory=list)     # results of a row split by batch
    exhausted: bool = False
    used: float = field(default_factory=time.monotonic)
    rows_read: int = 0
    rows_returned: int = 0
    chunk: int = FIRST_CHUNK


class HBaseHandler:
    def __init__(self, storage: Storage, api, scanner_lease: float = 60.0, max_scanners: int = 10000):
        self.storage = storage
        self.api = api
        self.scanner_lease = scanner_lease
        self.max_scanners = max_scanners
        self._scanners: dict[int, Scanner] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._disabled: set[bytes] = set()

    def open_scanners(self) -> int:
        with self._lock:
            return len(self._scanners)

    # ---------------------------------------------------------------- helpers
    def _cells(self, cells: list[Cell]) -> list:
        return [self.api.TCell(value=v, timestamp=ts) for _, ts, v in cells]

    def _row_result(self, row: bytes, cells: list[Cell], sort_columns: bool = False):
        result = self.api.TRowResult(row=row, columns={c: self.api.TCell(value=v, timestamp=ts) for c, ts, v in cells})
        if sort_columns:
            result.sortedColumns = [self.api.TColumn(columnName=c, cell=self.api.TCell(value=v, timestamp=ts))
                                    for c, ts, v in cells]
        return result

    def _rows(self, table: bytes, rows: list[bytes], columns, before) -> list:
        out = []
        for row in rows:
            cells = self.storage.get_row(table, row)
            selected = select(cells, columns, before) if cells else []
            if selected:
                out.append(self._row_result(row, selected))
        return out

    @staticmethod
    def _mutations(mutations) -> list[Mutation]:
        out = []
        for m in mutations or []:
            if not m.column:
                raise IllegalArgument("a mutation needs a column")
            out.append(Mutation(m.column, None if m.isDelete else (m.value or b"")))
        return out

    # ----------------------------------------------------------------- tables
    def enableTable(self, tableName):
        self.storage.families(tableName)
        self._disabled.discard(tableName)

    def disableTable(self, tableName):
        self.storage.families(tableName)
        self._disabled.add(tableName)

    def isTableEnabled(self, tableName):
        self.storage.families(tableName)
        return tableName not in self._disabled

    def compact(self, tableNameOrRegionName):
        """Nothing to compact: LMDB rewrites pages in place."""

    majorCompact = compact

    def getTableNames(self):
        return self.storage.table_names()

    def getColumnDescriptors(self, tableName):
        return {f.name + b":": self.api.ColumnDescriptor(name=f.name + b":", maxVersions=f.max_versions)
                for f in self.storage.families(tableName).values()}

    def getTableRegions(self, tableName):
        self.storage.families(tableName)
        return [self.api.TRegionInfo(startKey=b"", endKey=b"", id=1, name=tableName + b",,1", version=1,
                                     serverName=b"hopshive-hbase", port=0)]

    def createTable(self, tableName, columnFamilies):
        families = [Family(split_column(cd.name)[0], cd.maxVersions if cd.maxVersions is not None else 3)
                    for cd in columnFamilies or []]
        self.storage.create_table(tableName, families)
        log.info("table created", extra={"table": tableName.decode("utf-8", "replace"),
                                         "families": [f.name.decode("utf-8", "replace") for f in families]})

    def deleteTable(self, tableName):
        self.storage.delete_table(tableName)
        self._disabled.discard(tableName)
        log.info("table deleted", extra={"table": tableName.decode("utf-8", "replace")})

    # ------------------------------------------------------------------ reads
    def get(self, tableName, row, column, attributes=None):
        return self.getVerTs(tableName, row, column, None, 1)

    def getVer(self, tableName, row, column, numVersions, attributes=None):
        return self.getVerTs(tableName, row, column, None, numVersions)

    def getVerTs(self, tableName, row, column, timestamp, numVersions, attributes=None):
        cells = self.storage.get_row(tableName, row)
        if not cells:
            return []
        return self._cells(select(cells, [column], timestamp, max(1, numVersions or 1)))

    def getRow(self, tableName, row, attributes=None):
        return self._rows(tableName, [row], None, None)

    def getRowWithColumns(self, tableName, row, columns, attributes=None):
        return self._rows(tableName, [row], columns, None)

    def getRowTs(self, tableName, row, timestamp, attributes=None):
        return self._rows(tableName, [row], None, timestamp)

    def getRowWithColumnsTs(self, tableName, row, columns, timestamp, attributes=None):
        return self._rows(tableName, [row], columns, timestamp)

    def getRows(self, tableName, rows, attributes=None):
        return self._rows(tableName, rows or [], None, None)

    def getRowsWithColumns(self, tableName, rows, columns, attributes=None):
        return self._rows(tableName, rows or [], columns, None)

    def getRowsTs(self, tableName, rows, timestamp, attributes=None):
        return self._rows(tableName, rows or [], None, timestamp)

    def getRowsWithColumnsTs(self, tableName, rows, columns, timestamp, attributes=None):
        return self._rows(tableName, rows or [], columns, timestamp)

    def getRowOrBefore(self, tableName, row, family):
        found = self.storage.scan(tableName, row, b"", reverse=True, limit=1)
        if not found:
            return []
        return self._cells(select(found[0][1], [family], None))

    def getRegionInfo(self, row):
        raise IllegalArgument("getRegionInfo: this server has no hbase:meta (one region per table)")

    # ----------------------------------------------------------------- writes
    def mutateRow(self, tableName, row, mutations, attributes=None):
        self.storage.mutate_rows(tableName, [(row, self._mutations(mutations))])

    def mutateRowTs(self, tableName, row, mutations, timestamp, attributes=None):
        self.storage.mutate_rows(tableName, [(row, self._mutations(mutations))], timestamp)

    def mutateRows(self, tableName, rowBatches, attributes=None):
        self.storage.mutate_rows(tableName, [(b.row, self._mutations(b.mutations)) for b in rowBatches or []])

    def mutateRowsTs(self, tableName, rowBatches, timestamp, attributes=None):
        self.storage.mutate_rows(tableName, [(b.row, self._mutations(b.mutations)) for b in rowBatches or []],
                                 timestamp)

    def atomicIncrement(self, tableName, row, column, value):
        return self.storage.increment(tableName, row, column, value)

    def increment(self, increment):
        self.storage.increment(increment.table, increment.row, increment.column, increment.ammount)

    def incrementRows(self, increments):
        for increment in increments or []:
            self.increment(increment)

    def deleteAll(self, tableName, row, column, attributes=None):
        self.storage.mutate_rows(tableName, [(row, [Mutation(column, None)])])

    def deleteAllTs(self, tableName, row, column, timestamp, attributes=None):
        self.storage.mutate_rows(tableName, [(row, [Mutation(column, None)])], timestamp)

    def deleteAllRow(self, tableName, row, attributes=None):
        self.storage.delete_row(tableName, row)

    def deleteAllRowTs(self, tableName, row, timestamp, attributes=None):
        self.storage.delete_row(tableName, row, timestamp)

    def append(self, append):
        raise IllegalArgument("append is not supported by this server")

    def checkAndPut(self, tableName, row, column, value, mput, attributes=None):
        if mput is None or not mput.column:
            raise IllegalArgument("checkAndPut needs a mutation with a column")
        return self.storage.check_and_put(tableName, row, column, value, Mutation(mput.column, mput.value or b""))

    # --------------------------------------------------------------- scanners
    def _open(self, table: bytes, scanner: Scanner) -> int:
        self.storage.families(table)
        now = time.monotonic()
        with self._lock:
            for sid in [s for s, sc in self._scanners.items() if now - sc.used > self.scanner_lease]:
                del self._scanners[sid]
            if len(self._scanners) >= self.max_scanners:
                raise IllegalArgument(f"too many open scanners ({self.max_scanners}); close some")
            scanner_id = next(self._ids)
            self._scanners[scanner_id] = scanner
        return scanner_id

    def scannerOpenWithScan(self, tableName, scan, attributes=None):
        filt = parse_filter(scan.filterString, bool(scan.reversed)) if scan.filterString else None
        if scan.batchSize is not None and scan.batchSize < 0:
            raise IllegalArgument("batchSize must be >= 0")
        return self._open(tableName, Scanner(
            tableName, scan.startRow or b"", scan.stopRow or b"", scan.columns, scan.timestamp, filt,
            scan.batchSize or 0, bool(scan.reversed), bool(scan.sortColumns)))

    def scannerOpen(self, tableName, startRow, columns, attributes=None):
        return self._open(tableName, Scanner(tableName, startRow or b"", b"", columns, None, None, 0, False, False))

    def scannerOpenWithStop(self, tableName, startRow, stopRow, columns, attributes=None):
        return self._open(tableName, Scanner(tableName, startRow or b"", stopRow or b"", columns, None, None, 0,
                                             False, False))

    def scannerOpenWithPrefix(self, tableName, startAndPrefix, columns, attributes=None):
        return self._open(tableName, Scanner(tableName, startAndPrefix, b"", columns, None,
                                             parse_filter(b"PrefixFilter('" + startAndPrefix.replace(b"'", b"''")
                                                          + b"')"), 0, False, False))

    def scannerOpenTs(self, tableName, startRow, columns, timestamp, attributes=None):
        return self._open(tableName, Scanner(tableName, startRow or b"", b"", columns, timestamp, None, 0,
                                             False, False))

    def scannerOpenWithStopTs(self, tableName, startRow, stopRow, columns, timestamp, attributes=None):
        return self._open(tableName, Scanner(tableName, startRow or b"", stopRow or b"", columns, timestamp,
                                             None, 0, False, False))

    def _scanner(self, scanner_id: int) -> Scanner:
        with self._lock:
            scanner = self._scanners.get(scanner_id)
        if scanner is None:
            raise NoSuchScanner(scanner_id)
        scanner.used = time.monotonic()
        return scanner

    def scannerGet(self, id):
        return self.scannerGetList(id, 1)

    def scannerGetList(self, id, nbRows):
        scanner = self._scanner(id)
        wanted = max(1, nbRows or 1)
        out = scanner.pending[:wanted]
        scanner.pending = scanner.pending[wanted:]
        while len(out) < wanted and not scanner.exhausted:
            asked = scanner.chunk
            rows = self.storage.scan(scanner.table, scanner.start, scanner.stop, scanner.after, scanner.reverse,
                                     asked)
            scanner.chunk = min(SCAN_CHUNK, asked * 2)
            for row, cells in rows:
                scanner.after = row
                scanner.rows_read += 1
                selected = select(cells, scanner.columns, scanner.before)
                if scanner.filter is not None:
                    result = scanner.filter.apply(row, selected)
                    scanner.exhausted = result.stop
                    selected = result.cells if result.keep else []
                    if result.seek is not None and not scanner.reverse and result.seek > row and not result.keep:
                        scanner.start, scanner.after = result.seek, None      # skip scan
                        scanner.chunk = FIRST_CHUNK      # the rows after a seek are often few
                        break
                if selected:
                    scanner.rows_returned += 1
                    step = scanner.batch or len(selected)
                    for i in range(0, len(selected), step):
                        result_row = self._row_result(row, selected[i:i + step], scanner.sort_columns)
                        (out if len(out) < wanted else scanner.pending).append(result_row)
                if len(out) >= wanted or scanner.exhausted:
                    break
            else:
                scanner.exhausted = scanner.exhausted or len(rows) < asked
        return out

    def scannerClose(self, id):
        with self._lock:
            scanner = self._scanners.pop(id, None)
        if scanner is None:
            raise NoSuchScanner(id)
        log.debug("scanner closed", extra={"table": scanner.table.decode("utf-8", "replace"),
                                           "rows_read": scanner.rows_read, "rows_returned": scanner.rows_returned})
