"""The tables' transport over the broker: what a table sends to whom becomes frames per recipient
(``frames.py``: channel names and headers from ``channels.py``, the shared JSON parts spliced), routed
to this process's connections or bundled to other processes (``delivery.py``, with the relays that
receive the bundles), and request/reply calls reach a table wherever it runs (``calls.py``).
``table_transport.py`` implements the tables' ports ``TableTransport`` and ``Transport``
(app/tables/ports.py) with them; the connections (app/api/table_connection.py) read the frames."""
