"""Integrations with the frameworks polycodec's users already run, one module each, imported
only when used (each needs its framework, an optional extra of the package):

- ``polycodec.integrations.celery``: kombu serializers and typed Celery tasks
  (``polycodec[celery]``);
- ``polycodec.integrations.starlette``: a response class and typed request bodies
  (``polycodec[starlette]``);
- ``polycodec.integrations.fastapi``: the same for FastAPI, with a route class that lets the
  response class run without FastAPI's own encoder before it (``polycodec[fastapi]``);
- ``polycodec.integrations.sqlalchemy``: a column type that stores a typed value as JSON,
  JSONB or MessagePack (``polycodec[sqlalchemy]``).

The Integrations page of the documentation shows each with a complete example.
"""
