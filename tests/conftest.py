"""
Root of the test suite: fixture modules and the databases every test may use.

Fixtures live in ``tests/fixtures/`` and are registered here; see ``tests/README.md``.
"""

import django.test

pytest_plugins = [
    "tests.fixtures.factories",
    "tests.fixtures.directory",
    "tests.fixtures.metastores",
    "tests.fixtures.oidc",
    "tests.fixtures.merge",
    "tests.fixtures.object_store",
    "tests.fixtures.operations",
    "tests.fixtures.roles",
    "tests.fixtures.spark",
    "tests.fixtures.spark_cluster",
    "tests.fixtures.spark_connect",
    "tests.fixtures.tiers",
    "tests.fixtures.workers",
]

# Every database test runs in rolled-back transactions on the console's database and on all seven
# metastores (Saleor's pattern), so tests need no ``databases=`` of their own. Only TestCase: a
# TransactionTestCase (``transaction=True``) commits, so it must name the metastores it needs.
django.test.TestCase.databases = "__all__"
