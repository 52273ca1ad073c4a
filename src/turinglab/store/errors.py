"""The database layer's own error, named here so that code above the store handles a failed
database without importing SQLAlchemy (tests/store/test_no_sql_outside_store.py keeps it so)."""

from sqlalchemy.exc import SQLAlchemyError as DatabaseError

__all__ = ["DatabaseError"]
