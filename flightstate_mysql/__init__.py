"""MariaDB/MySQL adapter for flightstate (PyMySQL): the shared ``cminmsgs`` inbox.

Entry points: ``MySqlInbox`` (the ``Inbox`` port), ``create_cminmsgs`` /
``create_coutmsgs`` / ``insert_messages`` (docs/protocol.md §2 tables for tests and demos),
``translated`` (driver errors → core errors) and ``parse_mysql_dsn``.
"""

from flightstate_mysql._errors import is_transient, translated
from flightstate_mysql.dsn import parse_mysql_dsn
from flightstate_mysql.inbox import MySqlInbox
from flightstate_mysql.schema import create_cminmsgs, create_coutmsgs, insert_messages, lab_inbox

__all__ = [
    "MySqlInbox",
    "create_cminmsgs",
    "create_coutmsgs",
    "insert_messages",
    "is_transient",
    "lab_inbox",
    "parse_mysql_dsn",
    "translated",
]
