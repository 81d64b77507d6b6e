"""Projects and their members: the platform's rows plus the namespace and metastore state
they imply (hopshive.platform.provision).

Every step is re-runnable: creating a project that half exists (a crash in the middle)
completes it, and deleting one removes whatever is left.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from ..core.db import Database, IntegrityError, Tx
from .accounts import Accounts
from .exceptions import AlreadyExists, InvalidInput, NotFound
from .provision import HOMES_ROOT, PROJECTS_ROOT, Groups, Metastore, Namespace, location_path, project_user

log = logging.getLogger("hopshive.platform")
NAME = re.compile(r"^[a-z][a-z0-9_]{0,61}[a-z0-9]$|^[a-z]$")
ROLES = ("Data owner", "Data scientist")


@dataclass(frozen=True)
class Member:
    email: str
    username: str
    role: str


@dataclass(frozen=True)
class Project:
    name: str
    owner: str
    members: tuple[Member, ...]

    def as_json(self) -> dict:
        return {"name": self.name, "owner": self.owner,
                "members": [{"email": m.email, "username": m.username, "role": m.role} for m in self.members]}


class Projects:
    def __init__(self, db: Database, accounts: Accounts, namespace: Namespace, metastore: Metastore):
        self.db = db
        self.accounts = accounts
        self.namespace = namespace
        self.metastore = metastore
        self.groups = Groups(db)

    def project(self, name: str) -> Project:
        def work(tx: Tx) -> Project:
            row = tx.query_one("SELECT p.id, u.email FROM platform.projects p JOIN platform.users u"
                               " ON u.id=p.owner_id WHERE p.name=%s", (name,))
            if row is None:
                raise NotFound(f"no project named {name}")
            members = tx.query("SELECT u.email, u.username, m.role FROM platform.project_members m"
                               " JOIN platform.users u ON u.id=m.user_id WHERE m.project_id=%s ORDER BY u.email",
                               (row[0],))
            return Project(name, row[1], tuple(Member(*m) for m in members))
        return self.db.run(work, readonly=True)

    def projects_of(self, email: str) -> list[Project]:
        names = self.db.run(lambda tx: tx.query(
            "SELECT p.name FROM platform.projects p JOIN platform.project_members m ON m.project_id=p.id"
            " JOIN platform.users u ON u.id=m.user_id WHERE u.email=%s ORDER BY p.name", (email,)), readonly=True)
        return [self.project(n[0]) for n in names]

    def create(self, name: str, owner_email: str) -> Project:
        if not NAME.match(name or "") or "__" in name:
            raise InvalidInput(f"invalid project name {name!r}: lower-case letters, digits and single "
                               f"underscores, starting with a letter, at most 63 characters")
        if name == "default":
            raise InvalidInput("a project cannot be named `default` (the Hive default database)")
        owner = self.accounts.user(owner_email)

        def work(tx: Tx) -> None:
            try:
                tx.execute("INSERT INTO platform.projects (name, owner_id) VALUES (%s, %s)", (name, owner.id))
            except IntegrityError as exc:
                raise AlreadyExists(f"a project named {name} exists") from exc
            tx.execute("INSERT INTO platform.project_members (project_id, user_id, role) VALUES (%s, %s, %s)",
                       (tx.lastrowid, owner.id, "Data owner"))
        self.db.run(work)
        self.provision(name)
        log.info("project created", extra={"project": name, "owner": owner.username})
        return self.project(name)

    def provision(self, name: str) -> None:
        """Bring the namespace and the metastore in line with the project's rows."""
        project = self.project(name)
        owner = project_user(name, self.accounts.user(project.owner).username)
        for root in (PROJECTS_ROOT, HOMES_ROOT):    # made first: as parents they would get a child's mode
            self.namespace.ensure_directory(root, "755")
        for member in project.members:
            self._admit(name, member.username)
        self.namespace.mkdirs(f"{PROJECTS_ROOT}/{name}", owner, name, "770")
        location = self.metastore.create_database(name, f"Database of project {name}")
        self.namespace.chown(location_path(location), owner, name, "770")

    def add_member(self, name: str, email: str, role: str) -> Project:
        if role not in ROLES:
            raise InvalidInput(f"unknown role {role!r}: one of {', '.join(ROLES)}")
        user = self.accounts.user(email)
        self.project(name)

        def work(tx: Tx) -> None:
            tx.execute("INSERT INTO platform.project_members (project_id, user_id, role)"
                       " SELECT id, %s, %s FROM platform.projects WHERE name=%s"
                       " ON DUPLICATE KEY UPDATE role=VALUES(role)", (user.id, role, name))
        self.db.run(work)
        self._admit(name, user.username)
        return self.project(name)

    def _admit(self, name: str, username: str) -> None:
        """The member's project user joins the project group and gets a home of its own
        (Spark's staging and Hive's trash go there: /user/<project user>, 0700)."""
        user = project_user(name, username)
        self.groups.add(user, name)
        self.namespace.mkdirs(f"{HOMES_ROOT}/{user}", user, name, "700")

    def _dismiss(self, name: str, username: str) -> None:
        user = project_user(name, username)
        self.groups.remove(user, name)
        self.namespace.delete(f"{HOMES_ROOT}/{user}")

    def remove_member(self, name: str, email: str) -> Project:
        user = self.accounts.user(email)
        project = self.project(name)
        if project.owner == user.email:
            raise InvalidInput(f"{email} owns project {name}; the owner cannot be removed")
        self.db.run(lambda tx: tx.execute(
            "DELETE FROM platform.project_members WHERE user_id=%s"
            " AND project_id=(SELECT id FROM platform.projects WHERE name=%s)", (user.id, name)))
        self._dismiss(name, user.username)
        return self.project(name)

    def delete(self, name: str) -> None:
        project = self.project(name)
        location = self.metastore.database_location(name)
        if location:
            # As the namespace superuser (the Hive admin cannot touch a handed-over directory):
            # the database's metadata goes with its directory (foreign keys, ON DELETE CASCADE).
            self.namespace.delete(location_path(location))
        self.metastore.drop_database(name)      # whatever the directory did not take along
        self.namespace.delete(f"{PROJECTS_ROOT}/{name}")
        for member in project.members:
            self._dismiss(name, member.username)
        self.db.run(lambda tx: tx.execute("DELETE FROM platform.projects WHERE name=%s", (name,)))
        log.info("project deleted", extra={"project": name})

    def is_member(self, name: str, email: str) -> bool:
        return any(m.email == email for m in self.project(name).members)
