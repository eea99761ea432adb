"""The engine: one message or batch through the ports, inside one store transaction.

The unit of work (``unit_of_work``) checks idempotency inside the lock and runs the
handlers; ``processor`` and ``outcome`` turn a decoded row into its recorded result;
``requeue``, ``requests`` and ``lifecycle`` are the operator and housekeeping decisions on
the same ports; ``budget`` bounds what a batch holds.

Layer rule: imports the domain and ``flightstate_core.ports`` only (never the pump, an
adapter or a driver).
"""
