"""polycodec's benchmark harness: ``python -m benches`` (see ``benches/__main__.py``).

Compares polycodec against the libraries its users choose between, on the same dataclasses,
for JSON, MessagePack, Avro and pickle. See ``benches/README`` section of the report for method.
"""

__version__ = "0.1.0"
