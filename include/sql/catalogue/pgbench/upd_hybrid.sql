-- Stock outside the document and unindexed, in a fillfactor 90 table: updates can be HOT.
\set i random(1, :products)
UPDATE products_hybrid SET stock = stock + 1 WHERE id = :i;
