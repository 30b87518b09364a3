"""polycodec's benchmark harness: ``python -m benches`` (see ``benches/__main__.py``).

Compares polycodec against the libraries its users choose between, on the same dataclasses,
for JSON, MessagePack, Avro and pickle. ``benches/README.md`` explains usage and layout; the
generated report's *Method* section explains the measurement.
"""

__version__ = "0.1.0"
