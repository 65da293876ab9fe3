-- Small-row stock update of the column (on the update copy, which has the relational indexes).
\set i random(1, :products)
UPDATE products_rel_upd SET stock = stock + 1 WHERE id = :i;
