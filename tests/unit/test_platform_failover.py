"""hopshive.platform.provision's failover between instances (pure logic; the component test
test_platform_secure runs it against real namenodes and metastores)."""

from __future__ import annotations

import pytest

from hopshive.platform.exceptions import ProvisioningFailed, Unreachable
from hopshive.platform.provision import Failover, addresses


def test_addresses_take_a_list_or_a_comma_separated_string():
    assert addresses("https://a:9870/, https://b:9870") == ["https://a:9870", "https://b:9870"]
    assert addresses(["h1", " h2 "]) == ["h1", "h2"]
    assert addresses("solo") == ["solo"]
    for empty in ("", " , ", []):
        with pytest.raises(ValueError, match="no address"):
            addresses(empty)


def test_calls_start_at_the_instance_that_answered_last():
    down, asked = {"a"}, []

    def attempt(instance: str) -> str:
        asked.append(instance)
        if instance in down:
            raise Unreachable(f"{instance} down")
        return instance

    instances = Failover(["a", "b", "c"])
    assert instances.call(attempt) == "b" and asked == ["a", "b"]
    down, asked[:] = {"b"}, []
    assert instances.call(attempt) == "c" and asked == ["b", "c"]
    down, asked[:] = set(), []
    assert instances.call(attempt) == "c" and asked == ["c"]


def test_every_instance_down_names_each_and_other_errors_are_not_retried():
    def unreachable(instance: str) -> None:
        raise Unreachable(f"{instance} cannot be reached")

    with pytest.raises(ProvisioningFailed, match="^a cannot be reached; b cannot be reached$"):
        Failover(["a", "b"]).call(unreachable)
    asked = []

    def refused(instance: str) -> None:
        asked.append(instance)
        raise ProvisioningFailed("MKDIRS refused")

    with pytest.raises(ProvisioningFailed, match="MKDIRS refused"):
        Failover(["a", "b"]).call(refused)
    assert asked == ["a"]
