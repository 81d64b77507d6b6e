"""server2: a HiveServer2 (TCLIService) endpoint executing on Spark, one engine per project user."""
