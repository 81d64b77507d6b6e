"""The HTTP edge: HopsWorks' login/profile/logout paths and an admin API; platform errors
become status codes in one table (STATUS)."""

from __future__ import annotations

import asyncio
import logging
from typing import Awaitable, Callable

from aiohttp import web

from ..core.build import RUNNING
from ..core.metrics import CONTENT_TYPE
from ..security.secrets import SecretManager
from .accounts import Accounts, User
from .exceptions import AccountRefused, AlreadyExists, BadCredentials, Forbidden, InvalidInput, NotAuthenticated, \
    NotFound, PlatformError, ProvisioningFailed, TooManyFailures
from .metrics import LoginMetrics
from .projects import Projects
from .provision import project_user as project_user_name

log = logging.getLogger("hopshive.platform")
API = "/hopsworks-api/api"
COOKIE = "SESSION"
STATUS = {BadCredentials: 401, NotAuthenticated: 401, AccountRefused: 403, Forbidden: 403, TooManyFailures: 429,
          InvalidInput: 400, NotFound: 404, AlreadyExists: 409, ProvisioningFailed: 502}


def _error(exc: PlatformError) -> web.Response:
    status = next((code for kind, code in STATUS.items() if isinstance(exc, kind)), 400)
    headers = {"Retry-After": str(exc.retry_after)} if isinstance(exc, TooManyFailures) else None
    return web.json_response({"errorMsg": str(exc), "errorCode": status}, status=status, headers=headers)


@web.middleware
async def errors(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]):
    try:
        return await handler(request)
    except PlatformError as exc:
        return _error(exc)
    except web.HTTPException:
        raise
    except Exception:
        log.exception("request failed", extra={"path": request.path})
        return web.json_response({"errorMsg": "internal error", "errorCode": 500}, status=500)


class PlatformApp:
    def __init__(self, accounts: Accounts, projects: Projects, secrets: SecretManager,
                 trusted_proxies: frozenset[str] = frozenset()):
        self.metrics = LoginMetrics()
        self.accounts = accounts
        self.projects = projects
        self.secrets = secrets
        self.trusted_proxies = trusted_proxies

    def client_address(self, request: web.Request) -> str:
        """Who is logging in: the peer, or for a trusted proxy (server2, which logs its JDBC
        clients in) the address it appended to X-Forwarded-For, so that one client's failures
        never lock the proxy's other clients out."""
        remote = request.remote or ""
        forwarded = request.headers.get("X-Forwarded-For", "")
        if remote in self.trusted_proxies and forwarded.strip():
            return forwarded.rsplit(",", 1)[-1].strip()
        return remote

    def app(self) -> web.Application:
        app = web.Application(middlewares=[errors], client_max_size=64 * 1024)
        app.add_routes([
            web.post(f"{API}/auth/login", self.login),
            web.post(f"{API}/auth/logout", self.logout),
            web.get(f"{API}/users/profile", self.profile),
            web.get(f"{API}/project", self.my_projects),
            web.post(f"{API}/project/{{name}}/token", self.project_token),
            web.post(f"{API}/admin/users", self.add_user),
            web.post(f"{API}/admin/users/{{email}}/{{action:block|unblock}}", self.block),
            web.post(f"{API}/admin/projects", self.create_project),
            web.delete(f"{API}/admin/projects/{{name}}", self.delete_project),
            web.post(f"{API}/admin/projects/{{name}}/members", self.add_member),
            web.delete(f"{API}/admin/projects/{{name}}/members/{{email}}", self.remove_member),
            web.get("/health", self.health),
            web.get("/metrics", self.prometheus),
        ])
        return app

    @staticmethod
    async def _run(function, *args):
        return await asyncio.get_running_loop().run_in_executor(None, function, *args)

    async def _user(self, request: web.Request) -> User:
        return await self._run(self.accounts.session_user, request.cookies.get(COOKIE))

    async def _admin(self, request: web.Request) -> User:
        user = await self._user(request)
        if not user.admin:
            raise Forbidden("administrators only")
        return user

    @staticmethod
    async def _json(request: web.Request) -> dict:
        try:
            body = await request.json()
        except ValueError as exc:
            raise InvalidInput("the request body must be a JSON object") from exc
        if not isinstance(body, dict):
            raise InvalidInput("the request body must be a JSON object")
        return body

    async def login(self, request: web.Request) -> web.Response:
        form = await request.post()
        address = self.client_address(request)
        try:
            user, token = await self._run(self.accounts.login, str(form.get("email", "")),
                                          str(form.get("password", "")), address)
        except PlatformError as exc:
            self.metrics.refused(exc)
            raise
        self.metrics.succeeded()
        response = web.json_response({"sessionID": "", "status": "SUCCESS", "username": user.username})
        response.set_cookie(COOKIE, token, httponly=True, path="/", max_age=self.accounts.limits.session_lifetime)
        log.info("login", extra={"user": user.username, "address": address, "peer": request.remote})
        return response

    async def logout(self, request: web.Request) -> web.Response:
        await self._run(self.accounts.logout, request.cookies.get(COOKIE))
        response = web.json_response({"status": "SUCCESS"})
        response.del_cookie(COOKIE, path="/")
        return response

    async def profile(self, request: web.Request) -> web.Response:
        return web.json_response((await self._user(request)).profile())

    async def my_projects(self, request: web.Request) -> web.Response:
        user = await self._user(request)
        projects = await self._run(self.projects.projects_of, user.email)
        return web.json_response([p.as_json() for p in projects])

    async def project_token(self, request: web.Request) -> web.Response:
        """A delegation token for the caller as the project's user ``<project>__<username>``:
        what the namespace and the metastores believe (hopshive.security)."""
        user = await self._user(request)
        name = request.match_info["name"]
        if not await self._run(self.projects.is_member, name, user.email):
            raise Forbidden(f"{user.email} is not a member of {name}")
        project_user = project_user_name(name, user.username)
        token = await self._run(self.secrets.issue, project_user, project_user)
        log.info("token issued", extra={"user": project_user, "peer": request.remote})
        return web.json_response({"urlString": token.url_string(), "user": project_user,
                                  "expiresAt": self.secrets.expiry_of(token)})

    async def add_user(self, request: web.Request) -> web.Response:
        await self._admin(request)
        body = await self._json(request)
        user = await self._run(lambda: self.accounts.add_user(
            str(body.get("email", "")), str(body.get("password", "")), str(body.get("firstname", "")),
            str(body.get("lastname", "")), bool(body.get("twoFactor", False)), bool(body.get("admin", False)),
            str(body.get("status", "active"))))
        return web.json_response(user.profile(), status=201)

    async def block(self, request: web.Request) -> web.Response:
        await self._admin(request)
        status = "blocked" if request.match_info["action"] == "block" else "active"
        user = await self._run(self.accounts.set_status, request.match_info["email"], status)
        return web.json_response(user.profile())

    async def create_project(self, request: web.Request) -> web.Response:
        await self._admin(request)
        body = await self._json(request)
        project = await self._run(self.projects.create, str(body.get("name", "")), str(body.get("owner", "")))
        return web.json_response(project.as_json(), status=201)

    async def delete_project(self, request: web.Request) -> web.Response:
        await self._admin(request)
        await self._run(self.projects.delete, request.match_info["name"])
        return web.json_response({"status": "SUCCESS"})

    async def add_member(self, request: web.Request) -> web.Response:
        await self._admin(request)
        body = await self._json(request)
        project = await self._run(self.projects.add_member, request.match_info["name"], str(body.get("email", "")),
                                  str(body.get("role", "Data scientist")))
        return web.json_response(project.as_json())

    async def remove_member(self, request: web.Request) -> web.Response:
        await self._admin(request)
        project = await self._run(self.projects.remove_member, request.match_info["name"],
                                  request.match_info["email"])
        return web.json_response(project.as_json())

    async def prometheus(self, request: web.Request) -> web.Response:
        return web.Response(body=self.metrics.text(), headers={"Content-Type": CONTENT_TYPE})

    async def health(self, request: web.Request) -> web.Response:
        await self._run(lambda: self.accounts.db.run(lambda tx: tx.query_one("SELECT 1"), readonly=True))
        return web.json_response({"status": "ok", "build": RUNNING})
