"""Server-rendered pages of the console: thin views over ``catalog_admin.selectors``."""
