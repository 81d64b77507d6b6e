"""Accounts, logins and login sessions.

Passwords are hashed with Argon2id (argon2-cffi); a login with an unknown e-mail still
spends one hash verification, so the answer's timing does not tell which e-mails exist.
Failed logins are counted per account and per client address in a fixed window; past the
limit every attempt (right or wrong) is refused until the window ends.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from ..core.db import Database, IntegrityError, Tx
from .exceptions import AccountRefused, AlreadyExists, BadCredentials, InvalidInput, NotAuthenticated, NotFound, \
    TooManyFailures

EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s]{1,189}\.[^@\s]+$")
_HASHER = PasswordHasher()
_DUMMY_HASH = _HASHER.hash(secrets.token_hex(16))
USER_COLUMNS = "id, email, username, firstname, lastname, status, two_factor, admin"


@dataclass(frozen=True)
class User:
    id: int
    email: str
    username: str
    firstname: str
    lastname: str
    status: str
    two_factor: bool
    admin: bool

    def profile(self) -> dict:
        return {"id": self.id, "username": self.username, "email": self.email, "firstname": self.firstname,
                "lastname": self.lastname, "status": self.status, "twoFactor": self.two_factor,
                "admin": self.admin}


@dataclass(frozen=True)
class Limits:
    max_failures: int = 5            # failures per account in one window
    max_address_failures: int = 20   # failures per client address in one window
    window: int = 300                # seconds
    session_lifetime: int = 86400    # seconds


def _user(row: tuple) -> User:
    return User(row[0], row[1], row[2], row[3], row[4], row[5], bool(row[6]), bool(row[7]))


def _token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def username_for(email: str, taken) -> str:
    """A namespace-safe user name from the e-mail's local part: lower-case letters and
    digits, at most 20 characters, a number appended when ``taken(name)``."""
    base = re.sub(r"[^a-z0-9]", "", email.split("@", 1)[0].lower())[:20] or "user"
    if not base[0].isalpha():
        base = ("u" + base)[:20]
    name, suffix = base, 1
    while taken(name):
        suffix += 1
        name = f"{base[:20 - len(str(suffix))]}{suffix}"
    return name


class Accounts:
    def __init__(self, db: Database, limits: Limits = Limits()):
        self.db = db
        self.limits = limits

    # ------------------------------------------------------------------ users
    def add_user(self, email: str, password: str, firstname: str = "", lastname: str = "",
                 two_factor: bool = False, admin: bool = False, status: str = "active") -> User:
        email = email.strip().lower()
        if not EMAIL.match(email):
            raise InvalidInput(f"not an e-mail address: {email!r}")
        if len(password) < 8:
            raise InvalidInput("a password needs at least 8 characters")
        if status not in ("new", "active", "blocked"):
            raise InvalidInput(f"unknown account status {status!r}")
        hashed = _HASHER.hash(password)

        def work(tx: Tx) -> User:
            if tx.query_one("SELECT 1 FROM platform.users WHERE email=%s", (email,)):
                raise AlreadyExists(f"a user with e-mail {email} exists")
            username = username_for(email, lambda n: tx.query_one(
                "SELECT 1 FROM platform.users WHERE username=%s", (n,)) is not None)
            try:
                tx.execute("INSERT INTO platform.users (email, username, firstname, lastname, password_hash, status,"
                           " two_factor, admin) VALUES (%s,%s,%s,%s,%s,%s,%s,%s)",
                           (email, username, firstname, lastname, hashed, status, two_factor, admin))
            except IntegrityError as exc:
                raise AlreadyExists(f"a user with e-mail {email} exists") from exc
            return _user(tx.query_one(f"SELECT {USER_COLUMNS} FROM platform.users WHERE id=%s", (tx.lastrowid,)))
        return self.db.run(work)

    def user(self, email: str, tx: Tx | None = None) -> User:
        def work(t: Tx) -> User:
            row = t.query_one(f"SELECT {USER_COLUMNS} FROM platform.users WHERE email=%s", (email.strip().lower(),))
            if row is None:
                raise NotFound(f"no user with e-mail {email}")
            return _user(row)
        return work(tx) if tx is not None else self.db.run(work, readonly=True)

    def users(self) -> list[User]:
        return [_user(r) for r in self.db.run(lambda tx: tx.query(
            f"SELECT {USER_COLUMNS} FROM platform.users ORDER BY id"), readonly=True)]

    def set_status(self, email: str, status: str) -> User:
        user = self.user(email)

        def work(tx: Tx) -> None:
            tx.execute("UPDATE platform.users SET status=%s WHERE id=%s", (status, user.id))
            if status == "blocked":
                tx.execute("DELETE FROM platform.sessions WHERE user_id=%s", (user.id,))
        self.db.run(work)
        return self.user(email)

    # ------------------------------------------------------------------ logins
    def login(self, email: str, password: str, address: str) -> tuple[User, str]:
        """Check the password; returns the user and a new session token.

        Raises:
            TooManyFailures: this account or address failed too often lately.
            BadCredentials: wrong password or unknown e-mail.
            AccountRefused: two-factor on, blocked, or not activated.
        """
        email = (email or "").strip().lower()
        subjects = [("account", email[:254]), ("address", address[:254])]
        self._check_failures(subjects)
        row = self.db.run(lambda tx: tx.query_one(
            f"SELECT {USER_COLUMNS}, password_hash FROM platform.users WHERE email=%s", (email,)), readonly=True)
        try:
            _HASHER.verify(row[8] if row else _DUMMY_HASH, password or "")
            good = row is not None
        except (VerificationError, InvalidHashError):
            good = False
        if not good:
            self._record_failure(subjects)
            raise BadCredentials()
        user = _user(row[:8])
        if user.status == "blocked":
            raise AccountRefused("This account is blocked; contact the platform administrator")
        if user.status == "new":
            raise AccountRefused("This account is not activated yet")
        if user.two_factor:
            raise AccountRefused("This account uses two-factor authentication, which password-only logins "
                                 "(JDBC/ODBC, this API) cannot satisfy")
        token = secrets.token_urlsafe(32)

        def work(tx: Tx) -> None:
            tx.execute("DELETE FROM platform.login_failures WHERE scope='account' AND subject=%s", (email,))
            tx.execute("INSERT INTO platform.sessions (token_hash, user_id, expires)"
                       " VALUES (%s, %s, NOW(3) + INTERVAL %s SECOND)",
                       (_token_hash(token), user.id, self.limits.session_lifetime))
            tx.execute("DELETE FROM platform.sessions WHERE expires < NOW(3)")
        self.db.run(work)
        return user, token

    def _check_failures(self, subjects: list[tuple[str, str]]) -> None:
        def work(tx: Tx) -> int:
            waits = []
            for scope, subject in subjects:
                row = tx.query_one(
                    "SELECT failures, TIMESTAMPDIFF(SECOND, NOW(3), window_start + INTERVAL %s SECOND)"
                    " FROM platform.login_failures WHERE scope=%s AND subject=%s",
                    (self.limits.window, scope, subject))
                limit = self.limits.max_failures if scope == "account" else self.limits.max_address_failures
                if row and row[1] > 0 and row[0] >= limit:
                    waits.append(int(row[1]) + 1)
            return max(waits, default=0)
        wait = self.db.run(work, readonly=True)
        if wait:
            raise TooManyFailures(wait)

    def _record_failure(self, subjects: list[tuple[str, str]]) -> None:
        def work(tx: Tx) -> None:
            for scope, subject in subjects:
                tx.execute(
                    "INSERT INTO platform.login_failures (scope, subject, failures, window_start)"
                    " VALUES (%s, %s, 1, NOW(3)) ON DUPLICATE KEY UPDATE"
                    " failures = IF(window_start + INTERVAL %s SECOND < NOW(3), 1, failures + 1),"
                    " window_start = IF(window_start + INTERVAL %s SECOND < NOW(3), NOW(3), window_start)",
                    (scope, subject, self.limits.window, self.limits.window))
        self.db.run(work)

    def session_user(self, token: str | None) -> User:
        if not token:
            raise NotAuthenticated("Not logged in")
        row = self.db.run(lambda tx: tx.query_one(
            f"SELECT {', '.join('u.' + c.strip() for c in USER_COLUMNS.split(','))} FROM platform.sessions s"
            " JOIN platform.users u ON u.id=s.user_id WHERE s.token_hash=%s AND s.expires > NOW(3)",
            (_token_hash(token),)), readonly=True)
        if row is None:
            raise NotAuthenticated("Not logged in or the session expired")
        return _user(row)

    def logout(self, token: str | None) -> None:
        if token:
            self.db.run(lambda tx: tx.execute("DELETE FROM platform.sessions WHERE token_hash=%s",
                                              (_token_hash(token),)))
