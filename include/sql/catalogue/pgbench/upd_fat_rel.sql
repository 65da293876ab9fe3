-- Stock in its own column next to the 8 kB description: the TOAST pointer carries over.
\set i random(1, :rows)
UPDATE fat_rel SET stock = stock + 1 WHERE id = :i;
