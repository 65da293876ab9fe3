\set i random(1, :rows)
SELECT stock FROM fat_rel WHERE id = :i;
