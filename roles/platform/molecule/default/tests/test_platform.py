"""platform: the platform API runs and answers /health, the first administrator logs in and a
wrong password is refused, and a project made with the operator CLI gets its database
directory, owned by <project>__<owner>:<project> 770.  server2's scenario runs these too."""

testinfra_hosts = ["platform"]

PROJECT = "molecule_verify"


def login(node, email, password):
    form = {"email": email, "password": password}
    return node.http("http://127.0.0.1:8181/hopsworks-api/api/auth/login", method="POST", form=form)


def test_service_runs_and_answers_health(node):
    node.assert_serving("hopshive-platform", "http://127.0.0.1:8181/health")


def test_first_administrator_logs_in(node, platform_admin):
    response = login(node, *platform_admin)
    assert response.status == 200, f"expected 200, got {response}"


def test_wrong_password_is_refused(node, platform_admin):
    response = login(node, platform_admin.email, "not-the-password")
    assert response.status == 401, f"expected 401, got {response}"


def test_project_database_directory_is_handed_to_the_project(node, platform_admin):
    with node.platform_project(PROJECT, owner=platform_admin.email):
        response = node.webhdfs_status(f"/user/hive/warehouse/{PROJECT}.db")
    assert response.status == 200, response
    status = response.json()["FileStatus"]
    expected = (f"{PROJECT}__admin", PROJECT, "770")
    assert (status["owner"], status["group"], status["permission"]) == expected, f"expected {expected}, got {status}"
