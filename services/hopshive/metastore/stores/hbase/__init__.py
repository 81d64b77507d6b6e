"""The HBase store's parts: ``rowkey`` (partition keys as ordered bytes), ``planner``
(partition filters -> Gets and Scans), ``tables`` (the HBase tables and column layout)."""
