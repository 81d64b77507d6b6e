"""The deployed platform API as an administrator uses it: make the users and projects a
scenario needs, and remove them after (projects are deleted, users blocked: the API keeps
accounts, as HopsWorks does)."""

from __future__ import annotations

from hopshive.core.tls import VerifyingSession

from . import trust

API = "/hopsworks-api/api"


class PlatformAdmin:
    """An administrator's logged-in session of the platform API at ``url``."""

    def __init__(self, url: str, email: str, password: str):
        self.url = url
        self.http = VerifyingSession(trust.ca_file() or "")
        self.login_response = self.http.post(f"{url}{API}/auth/login", data={"email": email, "password": password},
                                             timeout=30)
        self.login_response.raise_for_status()

    def _call(self, method: str, path: str, **kwargs) -> dict:
        response = self.http.request(method, f"{self.url}{API}{path}", timeout=120, **kwargs)
        if response.status_code >= 400:
            raise RuntimeError(f"{method} {path}: {response.status_code} {response.text[:300]}")
        return response.json()

    def add_user(self, email: str, password: str) -> dict:
        return self._call("POST", "/admin/users", json={"email": email, "password": password,
                                                       "firstname": "Harness", "lastname": "User"})

    def block(self, email: str) -> None:
        self._call("POST", f"/admin/users/{email}/block")

    def create_project(self, name: str, owner: str) -> dict:
        return self._call("POST", "/admin/projects", json={"name": name, "owner": owner})

    def add_member(self, project: str, email: str, role: str = "Data scientist") -> dict:
        return self._call("POST", f"/admin/projects/{project}/members", json={"email": email, "role": role})

    def delete_project(self, project: str) -> None:
        self._call("DELETE", f"/admin/projects/{project}")

    def close(self) -> None:
        self.http.post(f"{self.url}{API}/auth/logout", timeout=30)
        self.http.close()


def owned_projects(platform: PlatformAdmin, prefix: str, password: str, keys=("a", "b")):
    """A user owning a project of its own per key, {key: (email, username, project)}, for the
    duration of a (generator) fixture; the projects are deleted and the users blocked after."""
    made = {}
    for key in keys:
        email, project = f"{prefix}-{key}@harness.example.org", f"{prefix.replace('-', '_')}_{key}"
        user = platform.add_user(email, password)
        platform.create_project(project, email)
        made[key] = (email, user["username"], project)
    yield made
    for email, _, project in made.values():
        platform.delete_project(project)
        platform.block(email)


def project_token(url: str, email: str, password: str, project: str) -> dict:
    """What a member gets as hopshive-platform login does: log in, ask for the project's
    token; {urlString, user, expiresAt}."""
    with VerifyingSession(trust.ca_file() or "") as http:
        http.post(f"{url}{API}/auth/login", data={"email": email, "password": password}, timeout=30
                  ).raise_for_status()
        answer = http.post(f"{url}{API}/project/{project}/token", timeout=30)
        answer.raise_for_status()
        return answer.json()
