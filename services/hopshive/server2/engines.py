"""Spark engines, one per project user (as Kyuubi's USER share level): started on a session's
first need, shared by that user's sessions, stopped after ``idle_timeout`` seconds without a
session, and at most ``max_engines`` at once (an idle one is stopped to make room; when
none is idle the new session is refused).

In a secured deployment (``security_mode: token``) each engine starts with a Hadoop token
file of its user's delegation token, and nothing else that proves an identity: the
namenodes and the metastores believe that token, not the engine's HADOOP_USER_NAME.  An
idle engine whose token is close to its expiry is replaced by one with a new token."""

from __future__ import annotations

import logging
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from multiprocessing.connection import Client, Connection
from typing import Callable

from ..security.token_files import credentials_for, write_private
from ..security.tokens import Token
from .exceptions import EngineUnavailable

log = logging.getLogger("hopshive.server2")


TokenSource = Callable[[], "tuple[str, int]"]     # -> (urlString, expiry in ms)


class Engine:
    def __init__(self, user: str, settings: dict, workdir: str, token: tuple[str, int] | None = None):
        self.user = user
        self.token_expires = token[1] / 1000.0 if token else None    # epoch seconds
        instance = f"engine-{user}-{secrets.token_hex(4)}"    # a replaced engine may still be stopping
        self.socket_path = os.path.join(workdir, f"{instance}.sock")
        self.authkey = secrets.token_bytes(32)
        self.sessions = 0
        self.idle_since = time.monotonic()
        self.ready = threading.Event()
        self.failure: str | None = None
        conf = [f"{k}={v}" for k, v in settings["spark_conf"].items()]
        env = dict(os.environ, HADOOP_USER_NAME=user, PYSPARK_PYTHON=sys.executable)
        env.update({k: str(v) for k, v in settings["engine_env"].items()})
        env.pop("HADOOP_TOKEN_FILE_LOCATION", None)
        self.token_path: str | None = None
        if token:
            self.token_path = os.path.join(workdir, f"{instance}.token")
            write_private(self.token_path, credentials_for(Token.from_url_string(token[0]),
                                                           settings["namenodes"], settings["nameservices"]))
            env["HADOOP_TOKEN_FILE_LOCATION"] = self.token_path
        self.log_path = os.path.join(workdir, f"engine-{user}.log")
        log_file = open(self.log_path, "ab")
        command = [sys.executable, "-m", "hopshive.server2.engine", "--socket", self.socket_path,
                   "--app-name", f"hopshive-server2-{user}"]
        for setting in conf:
            command += ["--conf", setting]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log_file,
                                        env=env, start_new_session=True)
        log_file.close()
        self.process.stdin.write(self.authkey.hex().encode() + b"\n")
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
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(grace)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for path in (self.socket_path, self.token_path):
            if path and os.path.exists(path):
                os.unlink(path)


class Engines:
    def __init__(self, settings: dict):
        self.settings = settings
        self.workdir = settings["work_dir"] or tempfile.mkdtemp(prefix="hopshive-server2-")
        os.makedirs(self.workdir, exist_ok=True)
        self.engines: dict[str, Engine] = {}
        self.lock = threading.Lock()

    @property
    def secured(self) -> bool:
        return self.settings["security_mode"] == "token"

    def acquire(self, user: str, token_source: TokenSource | None = None) -> Engine:
        """The user's engine (started when needed), counted as used by one more session.
        ``token_source`` gives the user's token when a secured engine must start; it is
        called outside the lock (it logs in to the platform)."""
        token = None
        while True:
            with self.lock:
                engine = self._running(user)
                if engine is None and (token is not None or not self.secured):
                    self._make_room()
                    log.info("starting engine", extra={"user": user})
                    engine = self.engines[user] = Engine(user, self.settings, self.workdir, token)
                if engine is not None:
                    engine.sessions += 1
                    break
            if token_source is None:
                raise EngineUnavailable(f"no token to start the Spark engine of {user} with")
            token = token_source()
        try:
            engine.wait(float(self.settings["engine_start_timeout"]))
        except EngineUnavailable:
            with self.lock:
                if self.engines.get(user) is engine:
                    self.engines.pop(user)
            engine.stop(1.0)
            raise
        return engine

    def _running(self, user: str) -> Engine | None:
        """The user's engine if it is alive and its token is not about to expire (an idle one
        that is, is stopped; a busy one serves on until its sessions end)."""
        engine = self.engines.get(user)
        if engine is not None and not engine.alive:
            log.warning("engine died; starting another", extra={"user": user})
            self.engines.pop(user)
            return None
        if engine is not None and engine.sessions == 0 and \
                engine.token_expiring(float(self.settings["token_refresh_margin"])):
            log.info("replacing an idle engine whose token expires soon", extra={"user": user})
            self.engines.pop(user)
            threading.Thread(target=engine.stop, daemon=True).start()
            return None
        return engine

    def _make_room(self) -> None:
        if len(self.engines) < int(self.settings["max_engines"]):
            return
        idle = [e for e in self.engines.values() if e.sessions == 0]
        if not idle:
            raise EngineUnavailable(f"all {self.settings['max_engines']} Spark engines are in use; try again later")
        victim = min(idle, key=lambda e: e.idle_since)
        self.engines.pop(victim.user)
        threading.Thread(target=victim.stop, daemon=True).start()

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
            engine.stop()

    def stop_all(self) -> None:
        with self.lock:
            engines = list(self.engines.values())
            self.engines.clear()
        for engine in engines:
            engine.stop()
