-- A file-backed database next to the in-memory one (the path is in the engine's private folder).
ATTACH DATABASE :path AS {schema};
