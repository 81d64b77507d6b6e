"""``python3 -m hopshive_backup`` (the copy the playbooks ship) or ``python -m hopshive.backup``."""

from .cli import main

raise SystemExit(main())
