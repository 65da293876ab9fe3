COPY {table} (id, body) FROM STDIN
