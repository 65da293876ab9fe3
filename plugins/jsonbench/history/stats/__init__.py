"""Statistics over plain numbers for judging benchmark results: no files, no frames, no engines."""
