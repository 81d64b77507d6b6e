"""hopshive-dfs argument parsing: every command has --help, hdfs-style flags parse."""

from __future__ import annotations

import pytest

from hopshive.cli.dfs import COMMANDS, build_parser, undash


@pytest.mark.parametrize("name", [name for name, *_ in COMMANDS])
def test_every_command_has_help(name, capsys):
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args([name, "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: hopshive-dfs {name}") and "--help" in out


@pytest.mark.parametrize("argv,expected", [
    (["rm", "-r", "-skipTrash", "/a", "/b"], {"r": True, "skipTrash": True, "f": False, "paths": ["/a", "/b"]}),
    (["rm", "-R", "/a"], {"r": True, "skipTrash": False}),
    (["du", "-s", "-h", "/a"], {"s": True, "h": True, "paths": ["/a"]}),
    (["ls"], {"paths": [], "R": False}),
    (["put", "-f", "a", "b", "/dst"], {"f": True, "local": ["a", "b"], "remote": "/dst"}),
    (["get", "/src", "."], {"remote": ["/src"], "local": "."}),
    (["chmod", "-R", "go-w", "/a"], {"R": True, "mode": "go-w", "paths": ["/a"]}),
    (["chown", "bob:staff", "/a"], {"owner": "bob:staff", "paths": ["/a"]}),
    (["stat", "%n %b", "/a"], {"args": ["%n %b", "/a"]}),
])
def test_hdfs_style_flags(argv, expected):
    args = build_parser().parse_args(["--namenode", "http://nn:9870", "--user", "u", *argv])
    assert {key: getattr(args, key) for key in expected} == expected
    assert (args.namenode, args.user, args.command) == ("http://nn:9870", "u", argv[0])


def test_defaults_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("HOPSHIVE_NAMENODE", "http://elsewhere:1")
    monkeypatch.setenv("HADOOP_USER_NAME", "carol")
    args = build_parser().parse_args(["ls"])
    assert (args.namenode, args.user) == ("http://elsewhere:1", "carol")


@pytest.mark.parametrize("argv", [[], ["rm"], ["mv", "/only-one"], ["chmod", "755"], ["rm", "-x", "/a"]])
def test_usage_errors_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(argv)
    assert exit_.value.code == 2
    assert "usage:" in capsys.readouterr().err


@pytest.mark.parametrize("argv, expected", [
    (["-ls", "-R", "/a"], ["ls", "-R", "/a"]),
    (["--user", "u", "-put", "-f", "x", "/y"], ["--user", "u", "put", "-f", "x", "/y"]),
    (["--namenode=http://nn:1", "-cat", "/f"], ["--namenode=http://nn:1", "cat", "/f"]),
    (["ls", "-d", "/a"], ["ls", "-d", "/a"]),
    (["-nosuch", "/a"], ["-nosuch", "/a"]),
])
def test_hdfs_dfs_dash_forms_name_the_command(argv, expected):
    assert undash(argv) == expected
