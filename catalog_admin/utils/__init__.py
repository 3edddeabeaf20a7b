"""
Model-free helpers shared by both apps (after NetBox's ``utilities/``): text of errors, htmx requests, paging
parameters. Nothing here imports models, services or views of either app.
"""
