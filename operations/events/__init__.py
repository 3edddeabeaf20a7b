"""Hive's notification events (NOTIFICATION_LOG) for every change the console executes: planning, objects, writing."""
