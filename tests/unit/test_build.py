"""What a service reports as its build (hopshive.core.build)."""

from prometheus_client import generate_latest

from hopshive import __version__
from hopshive.core import build
from hopshive.core.metrics import registry


def test_the_digest_is_the_file_the_install_role_wrote(tmp_path):
    written = tmp_path / "hopshive-source-digest"
    written.write_text("3bf36e7d\n")
    assert build.source_digest(written) == "3bf36e7d"


def test_a_virtualenv_the_install_role_did_not_make_reports_unknown(tmp_path):
    assert build.source_digest(tmp_path / "absent") == build.UNKNOWN
    (tmp_path / "empty").write_text("\n")
    assert build.source_digest(tmp_path / "empty") == build.UNKNOWN


def test_every_service_registry_serves_hopshive_build_info():
    text = generate_latest(registry()).decode()
    expected = f'hopshive_build_info{{source="{build.RUNNING["source"]}",version="{__version__}"}} 1.0'
    assert expected in text.splitlines(), text
