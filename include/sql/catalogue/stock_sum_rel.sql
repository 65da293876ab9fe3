SELECT coalesce(sum(stock::bigint), 0) FROM {table}
