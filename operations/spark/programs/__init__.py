"""PySpark programs: ``run(spark, plan, report) -> manifest`` each (see relocate.py)."""
