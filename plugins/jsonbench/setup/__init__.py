"""Setup steps ``./bin/setup`` runs once per machine: engine library links, SQLite venvs, the Otava venv.

Work that prepares a machine lives here, never in an engine adapter: an adapter only finds what
setup made and says what is missing.
"""
