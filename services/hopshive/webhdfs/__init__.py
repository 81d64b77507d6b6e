"""The WebHDFS REST API (v1) over the namespace library.

Hadoop's client sends raw UTF-8 bytes in the request target for non-ASCII names, which
aiohttp's C parser rejects; its pure-Python parser accepts them.  The switch must be set
before aiohttp is first imported, hence here.
"""

import os

os.environ.setdefault("AIOHTTP_NO_EXTENSIONS", "1")
