"""Capture: a host's event in, a redacted memory (and maybe a queued stop) out.

``event`` is the internal event, ``adapters`` map each host's hook payload to it, ``memory``
maps an event to the memory the store keeps, and ``ingest`` is the one pipeline that the hook,
REST ``POST /v1/events``, the importers and ``aletheia watch`` all run.  Standard library
only: the hook imports this package on every host event.
"""
