"""Server-rendered pages of change requests and the audit log: thin views over ``operations.selectors`` and services."""
