"""Spark engines, one per project user (as Kyuubi's USER share level): started on a session's
first need, shared by that user's sessions, stopped after ``idle_timeout`` seconds without a
session, and at most ``max_engines`` at once (an idle one is stopped to make room; when
none is idle the new session is refused).

In a secured deployment (``security_mode: token``) each engine starts with a Hadoop token
file of its user's delegation token, and nothing else that proves an identity: the
namenodes and the metastores believe that token, not the engine's HADOOP_USER_NAME.  An
idle engine whose token is close to its expiry is replaced by one with a new token."""

from __future__ import annotations

import base64
import logging
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from multiprocessing.connection import Client, Connection
from typing import Callable

from ..security.token_files import credentials_for
from ..security.tokens import Token
from .exceptions import EngineUnavailable

log = logging.getLogger("hopshive.server2")


TokenSource = Callable[[], "tuple[str, int]"]     # -> (urlString, expiry in ms)


class Engine:
    """One engine process.  With an OS ``account`` (a sandbox of the pool) it runs as that
    account through ``sudo -n -u`` and its home is ``<engine_root>/<account>``; otherwise as
    server2's own account in a directory of its own.  Either way its token reaches it on
    stdin, never through a file server2 writes, and everything else it gets is argv."""

    def __init__(self, user: str, settings: dict, workdir: str, token: tuple[str, int] | None = None,
                 account: str | None = None):
        self.user, self.account = user, account
        self.token_expires = token[1] / 1000.0 if token else None    # epoch seconds
        # Unique (a replaced engine may still be stopping) and short: a socket path has at most
        # 107 bytes, and project user names can be long.
        instance = f"engine-{secrets.token_hex(6)}"
        root = settings["engine_root"] or workdir
        self.socket_path = os.path.join(root, "sockets" if account else "", f"{instance}.sock")
        self.home = os.path.join(root, account) if account else os.path.join(workdir, instance)
        if not account:
            os.makedirs(self.home, mode=0o700, exist_ok=True)
        self.authkey = secrets.token_bytes(32)
        self.sessions = 0
        self.idle_since = time.monotonic()
        self.ready = threading.Event()
        self.failure: str | None = None
        env = {"HADOOP_USER_NAME": user, "PYSPARK_PYTHON": sys.executable,
               **{k: str(v) for k, v in settings["engine_env"].items()}}
        command = [sys.executable, "-m", "hopshive.server2.engine", "--socket", self.socket_path,
                   "--home", self.home, "--app-name", f"hopshive-server2-{user}"]
        command += [arg for k, v in settings["spark_conf"].items() for arg in ("--conf", f"{k}={v}")]
        command += [arg for k, v in env.items() for arg in ("--env", f"{k}={v}")]
        if account:
            command = ["sudo", "-n", "-u", account, "--", *command]
        credentials = b""
        if token:
            credentials = credentials_for(Token.from_url_string(token[0]), settings["namenodes"],
                                          settings["nameservices"])
        self.log_path = os.path.join(workdir, f"engine-{user}.log")
        with open(self.log_path, "ab") as log_file:
            self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log_file,
                                            env=_without_credentials(os.environ), start_new_session=True)
        self.process.stdin.write(self.authkey.hex().encode() + b"\n" + base64.b64encode(credentials) + b"\n")
        self.process.stdin.flush()
        threading.Thread(target=self._await_ready, daemon=True).start()

    def _await_ready(self) -> None:
        line = self.process.stdout.readline()
        if line.strip() == b"READY":
            self.ready.set()
        else:
            self.failure = f"the Spark engine of {self.user} exited while starting (see {self.log_path})"
            self.ready.set()

    def wait(self, timeout: float) -> None:
        if not self.ready.wait(timeout):
            self.stop()
            raise EngineUnavailable(f"the Spark engine of {self.user} did not start within {timeout:.0f} s")
        if self.failure:
            raise EngineUnavailable(self.failure)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def token_expiring(self, margin: float) -> bool:
        return self.token_expires is not None and self.token_expires - time.time() < margin

    def connect(self) -> Connection:
        try:
            return Client(self.socket_path, "AF_UNIX", authkey=self.authkey)
        except OSError as exc:
            raise EngineUnavailable(f"the Spark engine of {self.user} is gone: {exc}") from exc

    def stop(self, grace: float = 20.0) -> None:
        """Close its stdin (it stops its SparkContext and exits), kill it after ``grace``
        seconds; in a sandbox every process of the account goes too (whatever user code left
        running), so the account is clean for its next user."""
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(grace)
        except subprocess.TimeoutExpired:
            if not self.account:
                self.process.kill()
        if self.account:
            subprocess.run(["sudo", "-n", "-u", self.account, "--", "/bin/kill", "-KILL", "-1"],
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
        self.process.wait()
        if os.path.exists(self.socket_path):     # server2 owns the sockets' directory
            os.unlink(self.socket_path)
        if not self.account:                      # a sandbox's home is emptied by its next engine
            shutil.rmtree(self.home, ignore_errors=True)


def _without_credentials(environ) -> dict:
    """server2's environment for an engine, less any token file of server2's own."""
    return {k: v for k, v in environ.items() if k != "HADOOP_TOKEN_FILE_LOCATION"}


class Engines:
    """The running engines, one per user, and the pool of sandbox accounts they run as
    (``engine_accounts``; none: every engine runs as server2's account).  An account is
    handed out again only once its last engine and everything it left running are gone."""

    def __init__(self, settings: dict):
        self.settings = settings
        self.workdir = settings["work_dir"] or tempfile.mkdtemp(prefix="hopshive-server2-")
        os.makedirs(self.workdir, exist_ok=True)
        self.engines: dict[str, Engine] = {}
        self.lock = threading.Condition()
        self.accounts = list(settings["engine_accounts"])
        self.free_accounts = list(self.accounts)
        self.limit = int(settings["max_engines"])
        if self.accounts:
            self.limit = min(self.limit, len(self.accounts))

    @property
    def secured(self) -> bool:
        return self.settings["security_mode"] == "token"

    def acquire(self, user: str, token_source: TokenSource | None = None) -> Engine:
        """The user's engine (started when needed), counted as used by one more session.
        ``token_source`` gives the user's token when a secured engine must start; it is
        called outside the lock (it logs in to the platform)."""
        timeout = float(self.settings["engine_start_timeout"])
        deadline = time.monotonic() + timeout
        token = None
        while True:
            with self.lock:
                engine = self._running(user)
                if engine is None and (token is not None or not self.secured):
                    self._make_room()
                    if self.accounts and not self.free_accounts:
                        if not self.lock.wait(max(0.0, deadline - time.monotonic())):
                            raise EngineUnavailable(f"no sandbox account came free within {timeout:.0f} s")
                        continue        # meanwhile another session may have started this user's engine
                    account = self.free_accounts.pop(0) if self.accounts else None
                    log.info("starting engine", extra={"user": user, "account": account})
                    try:
                        engine = self.engines[user] = Engine(user, self.settings, self.workdir, token, account)
                    except BaseException:
                        self._give_back(account)
                        raise
                if engine is not None:
                    engine.sessions += 1
                    break
            if token_source is None:
                raise EngineUnavailable(f"no token to start the Spark engine of {user} with")
            token = token_source()
        try:
            engine.wait(timeout)
        except EngineUnavailable:
            with self.lock:
                if self.engines.get(user) is engine:
                    self.engines.pop(user)
            self._stop(engine, 1.0)
            raise
        return engine

    def _running(self, user: str) -> Engine | None:
        """The user's engine if it is alive and its token is not about to expire (an idle one
        that is, is stopped; a busy one serves on until its sessions end)."""
        engine = self.engines.get(user)
        if engine is not None and not engine.alive:
            log.warning("engine died; starting another", extra={"user": user})
            self._retire(engine)
            return None
        if engine is not None and engine.sessions == 0 and \
                engine.token_expiring(float(self.settings["token_refresh_margin"])):
            log.info("replacing an idle engine whose token expires soon", extra={"user": user})
            self._retire(engine)
            return None
        return engine

    def _make_room(self) -> None:
        if len(self.engines) < self.limit:
            return
        idle = [e for e in self.engines.values() if e.sessions == 0]
        if not idle:
            raise EngineUnavailable(f"all {self.limit} Spark engines are in use; try again later")
        self._retire(min(idle, key=lambda e: e.idle_since))

    def _retire(self, engine: Engine) -> None:
        """Forget ``engine`` (under the lock) and stop it in the background."""
        self.engines.pop(engine.user)
        threading.Thread(target=self._stop, args=(engine,), daemon=True).start()

    def _stop(self, engine: Engine, grace: float = 20.0) -> None:
        try:
            engine.stop(grace)
        finally:
            with self.lock:
                self._give_back(engine.account)

    def _give_back(self, account: str | None) -> None:
        if account is not None:
            self.free_accounts.append(account)
            self.lock.notify_all()

    def release(self, engine: Engine) -> None:
        with self.lock:
            engine.sessions -= 1
            if engine.sessions == 0:
                engine.idle_since = time.monotonic()

    def reap(self) -> None:
        """Stop engines idle for longer than the idle timeout."""
        limit = float(self.settings["engine_idle_timeout"])
        with self.lock:
            idle = [e for e in self.engines.values() if e.sessions == 0 and time.monotonic() - e.idle_since > limit]
            for engine in idle:
                self.engines.pop(engine.user)
        for engine in idle:
            log.info("stopping idle engine", extra={"user": engine.user})
            self._stop(engine)

    def stop_all(self) -> None:
        with self.lock:
            engines = list(self.engines.values())
            self.engines.clear()
        for engine in engines:
            self._stop(engine)
