-- The user's documents as JSON text, exactly as read.
CREATE TABLE {table} (id INTEGER PRIMARY KEY, doc TEXT NOT NULL);
