-- The platform API's own data: accounts, login sessions, failed-login counters, projects.
CREATE TABLE IF NOT EXISTS `{schema}`.users (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  email VARCHAR(254) NOT NULL,
  username VARCHAR(32) NOT NULL,
  firstname VARCHAR(128) NOT NULL DEFAULT '',
  lastname VARCHAR(128) NOT NULL DEFAULT '',
  password_hash VARCHAR(255) NOT NULL,
  status ENUM('new', 'active', 'blocked') NOT NULL DEFAULT 'active',
  two_factor BOOLEAN NOT NULL DEFAULT FALSE,
  admin BOOLEAN NOT NULL DEFAULT FALSE,
  created TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  UNIQUE KEY users_email (email),
  UNIQUE KEY users_username (username)
) ENGINE={engine};

CREATE TABLE IF NOT EXISTS `{schema}`.sessions (
  token_hash BINARY(32) NOT NULL PRIMARY KEY,
  user_id BIGINT NOT NULL,
  expires TIMESTAMP(3) NOT NULL,
  KEY sessions_user (user_id),
  CONSTRAINT sessions_user_fk FOREIGN KEY (user_id) REFERENCES `{schema}`.users (id) ON DELETE CASCADE
) ENGINE={engine};

CREATE TABLE IF NOT EXISTS `{schema}`.login_failures (
  scope ENUM('account', 'address') NOT NULL,
  subject VARCHAR(254) NOT NULL,
  failures INT NOT NULL,
  window_start TIMESTAMP(3) NOT NULL,
  PRIMARY KEY (scope, subject)
) ENGINE={engine};

CREATE TABLE IF NOT EXISTS `{schema}`.projects (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(63) NOT NULL,
  owner_id BIGINT NOT NULL,
  created TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  UNIQUE KEY projects_name (name),
  CONSTRAINT projects_owner_fk FOREIGN KEY (owner_id) REFERENCES `{schema}`.users (id)
) ENGINE={engine};

CREATE TABLE IF NOT EXISTS `{schema}`.project_members (
  project_id BIGINT NOT NULL,
  user_id BIGINT NOT NULL,
  role ENUM('Data owner', 'Data scientist') NOT NULL,
  PRIMARY KEY (project_id, user_id),
  KEY members_user (user_id),
  CONSTRAINT members_project_fk FOREIGN KEY (project_id) REFERENCES `{schema}`.projects (id) ON DELETE CASCADE,
  CONSTRAINT members_user_fk FOREIGN KEY (user_id) REFERENCES `{schema}`.users (id) ON DELETE CASCADE
) ENGINE={engine};
