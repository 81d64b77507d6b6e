"""Service configuration: built-in defaults < YAML file < environment variables.

A service declares its defaults as a nested dict.  The file named by ``--config`` (or the
``HOPSHIVE_CONFIG`` variable) is merged over them, then every ``HOPSHIVE_<SECTION>__<KEY>``
variable (double underscore between levels, values parsed as YAML scalars) is applied on top,
so a container or a systemd drop-in can change one value without a file.
"""

from __future__ import annotations

import copy
import os
from typing import Any, Mapping

import yaml

ENV_PREFIX = "HOPSHIVE_"


class ConfigError(ValueError):
    """The configuration cannot be used; the message names the offending key or file."""


def _merge(base: dict, override: Mapping, where: str) -> dict:
    for key, value in override.items():
        if key not in base:
            raise ConfigError(f"unknown setting {where}{key}")
        if isinstance(base[key], dict):
            if not isinstance(value, Mapping):
                raise ConfigError(f"setting {where}{key} must be a mapping")
            _merge(base[key], value, f"{where}{key}.")
        else:
            base[key] = value
    return base


def _env_overrides(environ: Mapping[str, str]) -> dict:
    overrides: dict = {}
    for name, raw in environ.items():
        if not name.startswith(ENV_PREFIX) or "__" not in name:
            continue
        path = name[len(ENV_PREFIX):].lower().split("__")
        node = overrides
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = yaml.safe_load(raw) if raw != "" else ""
    return overrides


def load_config(defaults: Mapping[str, Any], path: str | None = None,
                environ: Mapping[str, str] | None = None, sections: tuple[str, ...] | None = None) -> dict:
    """Return the effective configuration.  With ``sections``, only those top-level
    sections are read from the file (a tool may read another service's file for its
    `database` section).

    Raises:
        ConfigError: the file is unreadable or not a mapping, or names an unknown key.
    """
    environ = os.environ if environ is None else environ
    config = copy.deepcopy(dict(defaults))
    path = path or environ.get(ENV_PREFIX + "CONFIG")
    if path:
        try:
            with open(path, encoding="utf-8") as handle:
                from_file = yaml.safe_load(handle) or {}
        except OSError as exc:
            raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from exc
        except yaml.YAMLError as exc:
            raise ConfigError(f"config file {path} is not valid YAML: {exc}") from exc
        if not isinstance(from_file, Mapping):
            raise ConfigError(f"config file {path} must hold a mapping")
        if sections is not None:
            from_file = {key: value for key, value in from_file.items() if key in sections}
        _merge(config, from_file, "")
    _merge(config, _env_overrides(environ), "$" + ENV_PREFIX)
    return config


DATABASE_DEFAULTS = {
    "host": "127.0.0.1",
    "port": 3306,
    # Every node of a Galera cluster ("host" or "host:port"), tried in turn; empty: host/port.
    "hosts": [],
    "user": "hopshive",
    "password": "",
    "unix_socket": "",
    "pool_size": 8,
    "connect_timeout": 5,
    # Galera: make reads wait for replication so a session reads its own writes.
    "wsrep_sync_wait": False,
}
