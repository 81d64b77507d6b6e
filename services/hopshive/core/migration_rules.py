"""The "expand, then contract" rule that every schema migration obeys.

A rolling upgrade runs the new release's migrations once and only then upgrades the services
one host at a time, so until the last host is done the previous release's code runs against
the new schema.  A migration therefore *expands* the schema: new tables, indexes, views and
triggers, columns that are NULLable or have a DEFAULT, wider columns, rows inserted or
back-filled into new columns.  Whatever can break the previous release's code *contracts*
it: dropping or renaming anything, narrowing a column, a NOT NULL column without a DEFAULT,
a unique key, foreign key or check on an existing table, deleting or rewriting rows.

A change that needs a contraction is spread over releases: expand in release N and switch
the code to the new shape in N as well; contract in N+1 at the earliest: its upgrade runs
beside release N's code, which no longer reads what goes.  The contracting file says
so in its header, ``-- contract: <why the previous release's code no longer needs this>``.
The checker cannot read the previous release's code, so that line is the author's word for
it; what the checker does is refuse a contraction nobody declared (tests/unit run it over
every shipped migration).  A statement it does not recognise counts as contracting: a false
alarm costs a header line, a missed one an outage mid-upgrade.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .migrations import Migration

_TABLE = r"(?:[\w`{}]+\.)?`?(\w+)`?"  # schema-qualified (maybe `{schema}`) or not: the table's own name
_CREATE_TABLE = re.compile(rf"CREATE (?:TEMPORARY )?TABLE (?:IF NOT EXISTS )?{_TABLE}\s*", re.I)
_CREATE_INDEX = re.compile(rf"CREATE (UNIQUE )?(?:FULLTEXT |SPATIAL )?INDEX (?:IF NOT EXISTS )?\S+ ON {_TABLE}", re.I)
_CREATE_OTHER = re.compile(r"CREATE (?:DEFINER=\S+ )?(?:VIEW|TRIGGER|PROCEDURE|FUNCTION|SEQUENCE)\b", re.I)
_INSERT = re.compile(r"INSERT\b", re.I)
_UPDATE = re.compile(rf"UPDATE {_TABLE} SET (.*?)(?: WHERE .*)?$", re.I)
_ALTER = re.compile(rf"ALTER (?:ONLINE )?(?:IGNORE )?TABLE (?:IF EXISTS )?{_TABLE} (.*)$", re.I)
_CONTRACTING = [  # statements and ALTER TABLE clauses that always contract, and why
    (re.compile(r"DROP\b", re.I), "drops what old code may use"),
    (re.compile(r"RENAME\b", re.I), "renames what old code names"),
    (re.compile(r"(?:DELETE|TRUNCATE)\b", re.I), "deletes rows old code may read"),
    (re.compile(r"(?:REPLACE|CREATE OR REPLACE|ALTER)\b", re.I), "replaces what old code reads"),
]
_NOT_COLUMNS = {"PRIMARY", "KEY", "INDEX", "UNIQUE", "CONSTRAINT", "FOREIGN", "FULLTEXT", "SPATIAL", "CHECK",
                "PERIOD", "PARTITION"}
_ADD_COLUMN = re.compile(r"ADD (?:COLUMN )?(?:IF NOT EXISTS )?(`?\w+`? .*)$", re.I)
_ADD_INDEX = re.compile(r"ADD (?:INDEX|KEY|FULLTEXT|SPATIAL)\b", re.I)
_CHANGE = re.compile(r"(MODIFY|CHANGE) (?:COLUMN )?(?:IF EXISTS )?`?(\w+)`? (.*)$", re.I)
_NEUTRAL = re.compile(r"(?:ALGORITHM|LOCK)\s*=|ALTER (?:COLUMN )?\S+ SET DEFAULT\b", re.I)
_TYPE = re.compile(r"(\w+)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?( UNSIGNED)?( ZEROFILL)?\s*")
_FAMILIES = [  # types each wider than the one before it
    ("TINYINT", "SMALLINT", "MEDIUMINT", "INT", "BIGINT"),
    ("TINYTEXT", "TEXT", "MEDIUMTEXT", "LONGTEXT"),
    ("TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB"),
]


def check(migrations: Sequence[Migration]) -> list[str]:
    """Every way one component's migrations, in order, break the rule; empty when they keep it."""
    problems = []
    columns: dict[str, dict[str, str]] = {}  # table -> column -> definition, as the migrations left them
    for migration in migrations:
        file = f"{migration.version:03d}_{migration.name}.sql"
        step, declares, contracts = _Step(columns), migration.contraction, False
        # Placeholders rendered as themselves: messages quote the statement as the file has it.
        for number, statement in enumerate(migration.statements("{schema}", "{engine}"), 1):
            statement = " ".join(statement.split())
            reason = step.contracts(statement)
            contracts = contracts or reason is not None
            if reason and not declares:
                problems.append(f"{file}, statement {number}, {reason}; a contraction needs a header "
                                f"'-- contract: <why old code no longer needs it>': "
                                f"{statement[:160]}{'...' if len(statement) > 160 else ''}")
        if declares and not contracts:
            problems.append(f"{file} has a '-- contract:' header but only expands: remove the header")
    return problems


class _Step:
    """One migration's statements in order: what they create is new, so no old code uses it."""

    def __init__(self, columns: dict[str, dict[str, str]]):
        self.columns = columns
        self.new_tables: set[str] = set()
        self.new_columns: set[tuple[str, str]] = set()

    def contracts(self, statement: str) -> str | None:
        """Why ``statement`` can break the previous release's code; None when it only expands."""
        if match := _CREATE_TABLE.match(statement):
            rest = statement[match.end():]
            items = _split(rest[1:]) if rest.startswith("(") else []  # not for CREATE TABLE ... LIKE/SELECT
            self.new_tables.add(match[1])
            self.columns[match[1]] = dict(_column(item) for item in items
                                          if item.split()[0].strip("`").upper() not in _NOT_COLUMNS)
            return None
        if match := _CREATE_INDEX.match(statement):
            if match[1] and match[2] not in self.new_tables:
                return "adds a unique index to an existing table: old code's writes may violate it"
            return None
        if _CREATE_OTHER.match(statement) or _INSERT.match(statement):
            return None
        if match := _UPDATE.match(statement):
            targets = {(match[1], item.split("=")[0].split(".")[-1].strip(" `").lower())
                       for item in _split(match[2])}
            if match[1] in self.new_tables or targets <= self.new_columns:
                return None
            return "rewrites rows old code may read (only back-filling new columns expands)"
        if match := _ALTER.match(statement):
            reasons = [self._alter(match[1], clause) for clause in _split(match[2])]
            return None if match[1] in self.new_tables else next(filter(None, reasons), None)
        return _contracting(statement, "is not a known expand step (what the checker cannot tell is safe contracts)")

    def _alter(self, table: str, clause: str) -> str | None:
        """Why one clause of an ALTER TABLE can break old code; records the columns it changes."""
        columns = self.columns.setdefault(table, {})
        match = _ADD_COLUMN.match(clause)
        if match and match[1].strip("`").split()[0].upper() not in _NOT_COLUMNS:
            name, definition = _column(match[1])
            columns[name] = definition
            self.new_columns.add((table, name))
            if "NOT NULL" in definition and not re.search(r"\b(DEFAULT|AUTO_INCREMENT|AS)\b", definition):
                return f"adds NOT NULL column {name} without a DEFAULT: old code's INSERTs leave it out"
            return None
        if _ADD_INDEX.match(clause) or _NEUTRAL.match(clause):
            return None
        if match := _CHANGE.match(clause):
            old_name = match[2].lower()
            name, definition = _column(match[3]) if match[1].upper() == "CHANGE" else (old_name, match[3].upper())
            before = columns.pop(old_name, None)
            columns[name] = definition
            if name != old_name:
                return f"renames column {old_name} to {name}"
            if before is None:
                return f"changes column {name}, whose previous definition no migration shows"
            if not _widens(before, definition):
                return f"changes column {name} from '{before}' to '{definition}', which does not widen it"
            return None
        if clause.upper().startswith("ADD"):
            return "adds a key, foreign key or check to an existing table: old code's writes may violate it"
        if clause.upper().startswith("ALTER") and clause.upper().endswith("DROP DEFAULT"):
            return "drops a DEFAULT: old code's INSERTs that leave the column out fail"
        return _contracting(clause, f"has '{clause}', not a known expand step")


def _contracting(text: str, otherwise: str) -> str:
    """Why a statement or clause that expands in no known way contracts."""
    return next((reason for pattern, reason in _CONTRACTING if pattern.match(text)), otherwise)


def _split(text: str) -> list[str]:
    """The comma-separated items of ``text`` up to an unmatched ')', quotes and nesting respected."""
    items, depth, quoted, start, end = [], 0, False, 0, len(text)
    for i, char in enumerate(text):
        if char == "'":
            quoted = not quoted
        elif quoted:
            continue
        elif char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                end = i
                break
            depth -= 1
        elif char == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:end])
    return [item.strip() for item in items if item.strip()]


def _column(text: str) -> tuple[str, str]:
    """A column's lower-case name and upper-case definition, from ``name definition``."""
    name, _, definition = text.strip().partition(" ")
    return name.strip("`").lower(), definition.upper()


def _widens(before: str, after: str) -> bool:
    """Whether column definition ``after`` holds every value ``before`` did, and changes nothing else."""
    old, new = _TYPE.match(before), _TYPE.match(after)
    if not old or not new or old[4] != new[4] or old[5] != new[5]:
        return False
    if "NOT NULL" in after and "NOT NULL" not in before:
        return False
    if _attributes(before[old.end():]) != _attributes(after[new.end():]):
        return False
    family = next((types for types in _FAMILIES if old[1] in types and new[1] in types), None)
    if family:
        return family.index(new[1]) >= family.index(old[1])
    if old[1] != new[1] or (old[2] is None) != (new[2] is None):
        return False
    if old[2] is None:
        return True
    (old_digits, old_scale), (new_digits, new_scale) = ((int(m[2]), int(m[3] or 0)) for m in (old, new))
    return new_scale >= old_scale and new_digits - new_scale >= old_digits - old_scale


def _attributes(text: str) -> list[str]:
    """What a column definition says after its type, NULLability aside."""
    return re.sub(r"\b(NOT )?NULL\b", "", text).split()
