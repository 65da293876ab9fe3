-- :rows flat objects of :keys keys each, deterministic (no random()): key_0 .. key_<keys-1>, in order.
-- Every key i with i mod 3 = 1 holds an 8-letter string, the other two thirds a 6-digit-range integer.
-- Written the way Python's json.dumps writes (", " and ": " separators), as the seed's script did:
-- that is what makes text 183 bytes and JSONB about 140 at 10 keys, as in the seed.
-- h is a per (row, key) hash; char(123) and char(125) are the braces (literal braces are placeholders).
INSERT INTO {table} (id, doc)
WITH RECURSIVE
  r(id) AS (SELECT 1 UNION ALL SELECT id + 1 FROM r WHERE id < :rows),
  k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < :keys - 1)
SELECT r.id,
       char(123) || (
         SELECT group_concat(
                  '"key_' || kh.i || '": ' ||
                  CASE WHEN CAST(mod(kh.i, 3) AS INTEGER) = 1
                       THEN '"' || char(97 + mod(kh.h, 26), 97 + mod(kh.h / 26, 26), 97 + mod(kh.h / 676, 26),
                                        97 + mod(kh.h / 17576, 26), 97 + mod(kh.h / 456976, 26), 97 + mod(kh.h / 11881376, 26),
                                        97 + mod(kh.h / 308915776, 26), 97 + mod(kh.h / 13, 26)) || '"'
                       ELSE CAST(mod(kh.h, 1000000) AS INTEGER)
                  END,
                  ', ' ORDER BY kh.i)
         FROM (SELECT k.i, CAST(mod((r.id * 7919 + k.i * 104729 + 12345) * 2654435761, 4294967291) AS INTEGER) AS h FROM k) AS kh
       ) || char(125)
FROM r;
