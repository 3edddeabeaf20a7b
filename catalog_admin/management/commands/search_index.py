"""``manage.py search_index``: show, create or drop the opt-in trigram search indexes of a PostgreSQL metastore."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from catalog_admin.errors import ApplicationError
from catalog_admin.search_index import (
    SEARCH_INDEXES,
    create_search_indexes,
    drop_search_indexes,
    existing_search_indexes,
)
from catalog_admin.selectors.metastores import get_metastore

__all__ = ("Command",)


class Command(BaseCommand):
    help = (
        "Trigram indexes (pg_trgm) that make search fast on a PostgreSQL metastore with many tables. The console never "
        "creates them by itself: without an option this only reports which exist and prints the SQL; --create adds "
        "them (CREATE INDEX CONCURRENTLY, Hive may keep running), --drop removes them."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--metastore", help="registered metastore name (default: the default metastore)")
        action = parser.add_mutually_exclusive_group()
        action.add_argument("--create", action="store_true", help="create pg_trgm and the indexes")
        action.add_argument("--drop", action="store_true", help="drop the indexes")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            metastore = get_metastore(options["metastore"])
            alias = metastore.alias
            if options["create"]:
                for statement in create_search_indexes(alias):
                    self.stdout.write(statement)
            elif options["drop"]:
                for statement in drop_search_indexes(alias):
                    self.stdout.write(statement)
            present = set(existing_search_indexes(alias))
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        for index in SEARCH_INDEXES:
            state = "present" if index.name in present else "absent"
            self.stdout.write(f"{state:<8} {index.create_sql(concurrently=True)}")
