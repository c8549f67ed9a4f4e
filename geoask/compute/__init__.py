"""The compute (Python) step of the library: run a script in the sandbox or a session cell."""
