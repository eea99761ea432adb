"""The domain: what a SIS message means for a flight, with no I/O and no port.

The codec (``codec``) turns bytes into typed messages; the catalog, rules and merge algebra
(``catalog``, ``rules``, ``merge``, ``provenance``) say what each item does to a flight's
state (``state``); the handlers (``handlers``) decide a message against the current states
and return the next ones with their events; ``wire`` is the published form and
``write_plan`` the one pure plan of a save that every store executes.

Layer rule (checked by the import contracts in ``pyproject.toml``): this package imports
nothing else of the project.
"""
