"""The capture path: ``aletheia hook <tool> <event>``.  Standard library only."""
