"""tls: the host's certificate verifies against the deployment's CA for every name the
services are reached by, the key is the services' group's alone, and both tiers of the host
were told to restart once its files changed (a rerun tells nobody: idempotence)."""

testinfra_hosts = ["all"]

TLS_DIR = "/etc/hopshive/tls"


def test_the_files_and_their_modes(host):
    for name, mode, group in (("ca.pem", 0o644, "root"), ("host.pem", 0o644, "root"),
                              ("host.key", 0o640, "hopshive-tls")):
        file = host.file(f"{TLS_DIR}/{name}")
        assert file.is_file and file.user == "root" and file.group == group and file.mode == mode, name


def test_the_certificate_verifies_for_every_name(host):
    verified = host.run(f"openssl verify -CAfile {TLS_DIR}/ca.pem {TLS_DIR}/host.pem")
    assert verified.rc == 0, verified.stdout + verified.stderr
    for name in ("hopshive-tls", "localhost"):
        checked = host.run(f"openssl x509 -in {TLS_DIR}/host.pem -noout -checkhost {name}")
        assert "does match" in checked.stdout, checked.stdout
    checked = host.run(f"openssl x509 -in {TLS_DIR}/host.pem -noout -checkip 127.0.0.1")
    assert "does match" in checked.stdout, checked.stdout


def test_the_key_belongs_to_the_certificate(host):
    key = host.check_output(f"openssl pkey -in {TLS_DIR}/host.key -pubout")
    cert = host.check_output(f"openssl x509 -in {TLS_DIR}/host.pem -noout -pubkey")
    assert key == cert


def test_both_tiers_were_told_to_restart_once(host):
    assert host.file("/var/tmp/tls-restarts").content_string.split() == ["namenode", "server2"]
