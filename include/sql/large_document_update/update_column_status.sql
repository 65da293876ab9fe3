UPDATE {table} SET status = 'done' WHERE id <= %(half)s
