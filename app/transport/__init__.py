"""How a table's frames reach its connections: the channel names and frame format (``channels.py``)
and the routing between processes, bundles and relays (``delivery.py``). The tables say what goes to
whom (app/tables/fanout.py) and hand it to their transport (the port ``TableTransport``,
app/tables/ports.py); the connections (app/api/table_connection.py) read the frames."""
