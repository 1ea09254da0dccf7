"""The compression queue: Huey messages, the job/lease table, the ticker and the worker."""
