-- Sum of every document's stock: a fresh update copy matches the shared table, and each committed
-- stock update adds exactly 1.
SELECT coalesce(sum((data ->> 'stock')::bigint), 0) FROM {table}
