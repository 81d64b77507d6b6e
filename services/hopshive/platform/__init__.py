"""The platform API: the part of HopsWorks the authenticator and projects need (accounts,
logins, projects and their members), with its data in the `platform` schema."""
