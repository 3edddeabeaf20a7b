"""
Spark programs the console runs as jobs, and the engine that launches them.

``engine`` (configuration and launching, on the worker's side) and ``entry`` (the driver's entry point) are the
framework; ``programs/<name>.py`` are the programs. Nothing in this package imports Django: the driver and the
executors load it from a zip (``engine.package_zip``) wherever the cluster runs them.
"""
