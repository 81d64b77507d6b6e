"""The cleaner: removes the metadata foreign keys cannot reach, always on and highly available.

A library that does the work (``cleanup``: targeted and sweeping orphan removal with the
metastore's own definition of an orphan, ``scratch``: old scratch/staging directories,
``follower``: the MariaDB binlog, ``lease``: leader election with fencing, ``positions`` and
``events``: pure logic), a thin service (``service``) and its command line (``cli``).
"""
