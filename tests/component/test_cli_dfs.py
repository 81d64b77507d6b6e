"""hopshive-dfs, run as a subprocess against the WebHDFS under test: output, messages and
exit codes in the manner of `hdfs dfs`."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from hopshive.cli.dfs import COMMANDS


@pytest.fixture
def dfs(webhdfs):
    """``dfs(*args, user=..., stdin=...)`` -> CompletedProcess with text output."""
    def run(*args: str, user: str = "alice", stdin: bytes | None = None, env: dict | None = None,
            namenode: str | None = webhdfs.url) -> subprocess.CompletedProcess:
        options = ["--namenode", namenode] if namenode else []
        options += ["--user", user] if user else []
        result = subprocess.run([sys.executable, "-m", "hopshive.cli.dfs", *options, *args],
                                input=stdin, capture_output=True, timeout=120,
                                env={**os.environ, **(env or {})})
        result.out, result.err = result.stdout.decode(errors="replace"), result.stderr.decode()
        return result
    return run


def ok(result) -> str:
    assert result.returncode == 0, f"exit {result.returncode}: {result.err}"
    return result.out


def failed(result, message: str) -> None:
    assert result.returncode == 1, (result.returncode, result.out, result.err)
    assert message in result.err, result.err


def test_help_and_usage_errors(dfs):  # --help of every command: tests/unit/test_cli_parser.py
    assert "usage: hopshive-dfs rm" in ok(dfs("rm", "--help"))
    assert all(name in ok(dfs("--help")) for name, *_ in COMMANDS)
    assert dfs("frobnicate").returncode == 2


def test_put_cat_get_round_trip(dfs, root, tmp_path):
    local = tmp_path / "data.bin"
    local.write_bytes(os.urandom(200_000))
    ok(dfs("put", str(local), f"{root}/data.bin"))
    assert dfs("cat", f"{root}/data.bin").stdout == local.read_bytes()
    ok(dfs("get", f"{root}/data.bin", str(tmp_path / "back.bin")))
    assert (tmp_path / "back.bin").read_bytes() == local.read_bytes()
    assert "._COPYING_" not in ok(dfs("ls", root))
    assert not any(p.name.endswith("._COPYING_") for p in tmp_path.iterdir())


def test_put_refuses_to_overwrite_without_f(dfs, root, tmp_path):
    (tmp_path / "a").write_bytes(b"first")
    (tmp_path / "b").write_bytes(b"second")
    ok(dfs("put", str(tmp_path / "a"), f"{root}/f"))
    failed(dfs("put", str(tmp_path / "b"), f"{root}/f"), f"hopshive-dfs: put: `{root}/f': File exists")
    assert dfs("cat", f"{root}/f").stdout == b"first"
    ok(dfs("put", "-f", str(tmp_path / "b"), f"{root}/f"))
    assert dfs("cat", f"{root}/f").stdout == b"second"
    failed(dfs("put", str(tmp_path / "missing"), f"{root}/g"), "No such file or directory")


def test_put_from_stdin_into_a_directory_and_recursively(dfs, root, tmp_path):
    ok(dfs("put", "-", f"{root}/from-stdin", stdin=b"piped"))
    assert dfs("cat", f"{root}/from-stdin").stdout == b"piped"
    (tmp_path / "tree" / "sub").mkdir(parents=True)
    (tmp_path / "tree" / "sub" / "x").write_text("x")
    (tmp_path / "one").write_text("1")
    ok(dfs("mkdir", f"{root}/dir"))
    ok(dfs("put", str(tmp_path / "tree"), str(tmp_path / "one"), f"{root}/dir"))
    assert dfs("cat", f"{root}/dir/tree/sub/x").stdout == b"x"
    assert dfs("cat", f"{root}/dir/one").stdout == b"1"
    ok(dfs("get", f"{root}/dir", str(tmp_path / "copy")))
    assert (tmp_path / "copy" / "tree" / "sub" / "x").read_text() == "x"


def test_ls_formats_and_errors(dfs, root, tmp_path):
    ok(dfs("mkdir", "-p", f"{root}/d/e"))
    ok(dfs("put", "-", f"{root}/d/file", stdin=b"12345"))
    out = ok(dfs("ls", f"{root}/d"))
    lines = out.splitlines()
    assert lines[0] == "Found 2 items"
    assert lines[1].startswith("drwxr-xr-x") and lines[1].endswith(f"{root}/d/e") and " - " in lines[1]
    fields = lines[2].split()
    assert (fields[0], fields[2], fields[4], fields[-1]) == ("-rw-r--r--", "alice", "5", f"{root}/d/file")
    recursive = ok(dfs("ls", "-R", root)).splitlines()
    assert [line.split()[-1] for line in recursive] == [f"{root}/d", f"{root}/d/e", f"{root}/d/file"]
    failed(dfs("ls", f"{root}/nope"), f"hopshive-dfs: ls: `{root}/nope': No such file or directory")


def test_relative_paths_start_at_home(dfs, webhdfs):
    webhdfs.ensure_home("alice")
    ok(dfs("mkdir", "-p", "rel-test/inner"))
    assert ok(dfs("ls", "rel-test")).splitlines()[1].endswith(" rel-test/inner")
    assert "rel-test" in ok(dfs("ls"))
    ok(dfs("rm", "-r", "-skipTrash", "rel-test"))


def test_mkdir_without_p_needs_the_parent(dfs, root):
    failed(dfs("mkdir", f"{root}/a/b"), f"hopshive-dfs: mkdir: `{root}/a/b': No such file or directory")
    ok(dfs("mkdir", f"{root}/a"))
    failed(dfs("mkdir", f"{root}/a"), f"mkdir: `{root}/a': File exists")
    ok(dfs("mkdir", "-p", f"{root}/a", f"{root}/x/y/z"))
    assert ok(dfs("ls", "-d", f"{root}/x/y/z")).startswith("drwxr-xr-x")


def test_mv_renames_moves_into_and_reports(dfs, root):
    ok(dfs("put", "-", f"{root}/a", stdin=b"a"))
    ok(dfs("put", "-", f"{root}/b", stdin=b"b"))
    ok(dfs("mkdir", f"{root}/dir"))
    ok(dfs("mv", f"{root}/a", f"{root}/a2"))
    ok(dfs("mv", f"{root}/a2", f"{root}/b", f"{root}/dir"))
    assert dfs("cat", f"{root}/dir/a2").stdout == b"a"
    failed(dfs("mv", f"{root}/gone", f"{root}/x"), f"mv: `{root}/gone': No such file or directory")
    ok(dfs("put", "-", f"{root}/c", stdin=b"c"))
    failed(dfs("mv", f"{root}/c", f"{root}/dir/b"), f"mv: `{root}/dir/b': File exists")
    failed(dfs("mv", f"{root}/dir", f"{root}/dir/sub"), "is a subdirectory of itself")
    failed(dfs("mv", f"{root}/c", f"{root}/no/where"), f"mv: `{root}/no/where': No such file or directory")


def test_rm_to_trash_skip_trash_and_errors(dfs, root):
    ok(dfs("put", "-", f"{root}/f", stdin=b"x"))
    ok(dfs("mkdir", "-p", f"{root}/d/e"))
    out = ok(dfs("rm", f"{root}/f"))
    assert out.strip() == f"Moved: '{root}/f' to trash at: /user/alice/.Trash/Current{root}/f"
    assert dfs("cat", f"/user/alice/.Trash/Current{root}/f").stdout == b"x"
    failed(dfs("rm", f"{root}/d"), f"hopshive-dfs: rm: `{root}/d': Is a directory")
    assert ok(dfs("rm", "-r", "-skipTrash", f"{root}/d")).strip() == f"Deleted {root}/d"
    failed(dfs("rm", f"{root}/missing"), f"hopshive-dfs: rm: `{root}/missing': No such file or directory")
    assert dfs("rm", "-f", f"{root}/missing").returncode == 0


def test_a_failing_path_does_not_stop_the_others(dfs, root):
    ok(dfs("put", "-", f"{root}/keep", stdin=b"1"))
    ok(dfs("put", "-", f"{root}/drop", stdin=b"2"))
    result = dfs("rm", "-skipTrash", f"{root}/missing", f"{root}/drop")
    failed(result, "No such file or directory")
    assert f"Deleted {root}/drop" in result.out
    assert ok(dfs("ls", root)).splitlines()[0] == "Found 1 items"


def test_permission_denied_is_reported(dfs, root):
    ok(dfs("put", "-", f"{root}/f", stdin=b"alice's"))
    failed(dfs("rm", "-skipTrash", f"{root}/f", user="bob"), "hopshive-dfs: rm: Permission denied: user=bob")
    failed(dfs("put", "-", f"{root}/g", user="bob", stdin=b"x"), "Permission denied")
    failed(dfs("chown", "bob", f"{root}/f"), "chown: Permission denied")


def test_chmod_octal_symbolic_and_recursive(dfs, root):
    ok(dfs("mkdir", "-p", f"{root}/d/e"))
    ok(dfs("put", "-", f"{root}/d/f", stdin=b"1"))
    ok(dfs("chmod", "700", f"{root}/d"))
    assert ok(dfs("stat", "%a", f"{root}/d")).strip() == "700"
    ok(dfs("chmod", "g+rx,o+r", f"{root}/d/f"))
    assert ok(dfs("stat", "%A", f"{root}/d/f")).strip() == "rw-r-xr--"
    ok(dfs("chmod", "-R", "a-w", f"{root}/d"))
    assert ok(dfs("stat", "%a", f"{root}/d", f"{root}/d/e", f"{root}/d/f")).split() == ["500", "555", "454"]
    ok(dfs("chmod", "+t", f"{root}/d/e"))
    assert ok(dfs("stat", "%a", f"{root}/d/e")).strip() == "1555"
    failed(dfs("chmod", "rwx", f"{root}/d"), "does not match the expected pattern")


def test_chown_by_the_superuser(dfs, root):
    ok(dfs("mkdir", "-p", f"{root}/d/e"))
    ok(dfs("chown", "-R", "bob:staff", f"{root}/d", user="hdfs"))
    assert ok(dfs("stat", "%u:%g", f"{root}/d", f"{root}/d/e")).split() == ["bob:staff", "bob:staff"]
    ok(dfs("chown", ":other", f"{root}/d", user="hdfs"))
    assert ok(dfs("stat", "%u:%g", f"{root}/d")).strip() == "bob:other"


def test_du_and_stat(dfs, root):
    ok(dfs("mkdir", "-p", f"{root}/d/e"))
    ok(dfs("put", "-", f"{root}/d/small", stdin=b"x" * 100))
    ok(dfs("put", "-", f"{root}/d/e/big", stdin=b"y" * 3000))
    assert ok(dfs("du", "-s", f"{root}/d")).split() == ["3100", "3100", f"{root}/d"]
    rows = [line.split() for line in ok(dfs("du", f"{root}/d")).splitlines()]
    assert rows == [["3000", "3000", f"{root}/d/e"], ["100", "100", f"{root}/d/small"]]
    assert ok(dfs("du", "-s", "-h", f"{root}/d")).split() == ["3.0", "K", "3.0", "K", f"{root}/d"]
    out = ok(dfs("stat", "%n|%b|%F|%u|%r", f"{root}/d/small", f"{root}/d"))
    assert out.splitlines() == ["small|100|regular file|alice|1", "d|0|directory|alice|0"]
    assert len(ok(dfs("stat", f"{root}/d")).strip()) == len("2024-01-01 00:00:00")


def test_expunge_checkpoints_the_trash(dfs, webhdfs, root):
    if webhdfs.server is None:
        pytest.skip("EXPUNGE over WebHDFS is a HopsHive extension")
    ok(dfs("put", "-", f"{root}/f", stdin=b"x"))
    ok(dfs("rm", f"{root}/f"))
    assert "Created trash checkpoint" in ok(dfs("expunge"))
    alice = webhdfs.client("alice")
    checkpoints = [name for name in alice.listing("/user/alice/.Trash") if name != "Current"]
    assert "Current" not in alice.listing("/user/alice/.Trash") and checkpoints
    for name in checkpoints:
        alice.delete(f"/user/alice/.Trash/{name}")


def test_defaults_come_from_the_environment_and_unreachable_namenodes_are_reported(dfs, webhdfs, root):
    ok(dfs("mkdir", f"{root}/by-env", namenode=None, user=None,
           env={"HOPSHIVE_NAMENODE": webhdfs.url, "HADOOP_USER_NAME": "alice"}))
    assert "alice" in ok(dfs("ls", "-d", f"{root}/by-env"))
    result = dfs("ls", "/", namenode="http://127.0.0.1:9")
    failed(result, "hopshive-dfs: ls: cannot reach the namenode at http://127.0.0.1:9")
