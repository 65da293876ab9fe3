-- Deterministic generators for the json vs jsonb documents (seed 001).
-- Every value is a hash of (row number, field salt, fixed seed 1): PostgreSQL's extended integer
-- hash, which hash partitioning relies on and which is therefore the same on every version and
-- platform, and md5 for strings. Every server and rerun builds byte-identical documents, and no
-- generator depends on random()'s state.

-- A non-negative 48-bit integer from the row number n and a field salt.
CREATE OR REPLACE FUNCTION jvj_rand(n bigint, salt int)
RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT hashint8extended(n, 1000000 + salt) & 281474976710655
$$;

-- One word of a list, chosen by jvj_rand.
CREATE OR REPLACE FUNCTION jvj_pick(words text[], n bigint, salt int)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT words[1 + mod(jvj_rand(n, salt), cardinality(words))::int]
$$;

-- A random string of len characters (len <= 44) over the 64 characters of URL-safe base64: letters,
-- digits, '-' and '_' (two md5 digests, 32 bytes). Random text over a 64-character alphabet is as
-- incompressible as text gets for pglz and lz4: the documents' entropy is set by how many of these
-- characters they carry (see the fitted shapes below).
CREATE OR REPLACE FUNCTION jvj_token(n bigint, salt int, len int)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT translate(substr(encode(decode(md5('jvj-001:' || n || ':' || salt) || md5('jvj-001:' || n || ':' || salt || ':2'), 'hex'),
                                 'base64'), 1, len), '+/', '-_')
$$;

-- A string of len lowercase letters (len <= 32) from a 16-letter alphabet (a-p): the small shapes'
-- names, whose entropy does not matter (a document under the ~2 kB threshold is never compressed),
-- only their fixed length.
CREATE OR REPLACE FUNCTION jvj_letters(n bigint, salt int, len int)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT translate(substr(md5('jvj-001:' || n || ':' || salt), 1, len), '0123456789', 'ghijklmnop')
$$;

-- The two spellings of one document. Compact: no whitespace at all. Pretty: two-space indentation,
-- one member per line. Both come from the same jsonb value, so they hold the same keys, in the same
-- order (jsonb's own), and the same values. The generators never put ', ', '": ' or four spaces
-- inside a string, which is what makes the plain replace() calls exact.
CREATE OR REPLACE FUNCTION jvj_compact(doc jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT replace(replace(doc::text, '": ', '":'), ', ', ',')
$$;

CREATE OR REPLACE FUNCTION jvj_pretty(doc jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT replace(jsonb_pretty(doc), '    ', '  ')
$$;


-- The shapes, fitted to seed 001's published statistics (docs/seed-001-documents.md has the measured
-- table and the arithmetic, `python -m jsonbench.tools.fit_documents` measures them again).
-- What each knob is fitted to, which seed figure, is said at the knob.

-- Shape "small": a customer record of 11 scalar members. Fitted to: compact 203.4 bytes (the string
-- lengths: first 6, last 9, email 31, city 9, tag 6 letters, id 8 digits; 60 % of rows "active":
-- true, the rest false, which is one byte longer); pretty 248.4 = compact + 45, which is 4 bytes a
-- member plus 1 for 11 members and no nesting (the member count); jsonb +17.8 % and pretty -3.6 %
-- (the share of numbers: id and age are the only numbers, so the jsonb datum is 245-246 bytes).
-- The seed's ratios are page counts: 33 compact json rows, 28 jsonb rows and 27 pretty json rows fit
-- an 8 kB page (33/28 = 1.179, 27/28 = 0.964), which only holds when every row falls in the same
-- 8-byte alignment step, so every string has a fixed length. Left free: the letters themselves
-- (uncompressed documents, their entropy does not matter).
CREATE OR REPLACE FUNCTION jvj_doc_small(n bigint)
RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT jsonb_build_object(
    'id', 10000000 + n,
    'first', initcap(jvj_letters(n, 1, 6)),
    'last', initcap(jvj_letters(n, 2, 9)),
    'email', jvj_letters(n, 1, 6) || '.' || jvj_letters(n, 2, 9) || (100 + mod(jvj_rand(n, 3), 900)) || '@example.com',
    'age', 18 + mod(jvj_rand(n, 4), 63),
    'city', initcap(jvj_letters(n, 5, 9)),
    'zip', (1000 + mod(jvj_rand(n, 6), 9000)) || ' ' || upper(jvj_letters(n, 7, 2)),
    'country', upper(jvj_letters(n, 8, 2)),
    'active', mod(jvj_rand(n, 9), 5) < 3,
    'joined', to_char(date '2015-01-01' + mod(jvj_rand(n, 10), 3650)::int, 'YYYY-MM-DD'),
    'tag', jvj_letters(n, 11, 6))
$$;

-- Shape "small_long_keys": the same values under long, descriptive key names. The key "first"
-- keeps its name so the read benchmark does the same work on both small shapes. Fitted to: +6.3 %
-- (the key lengths: 263 characters of keys against 43, so compact json is about 427 bytes and 17
-- rows fit a page against 16 of jsonb, 17/16 = 1.0625).
CREATE OR REPLACE FUNCTION jvj_doc_small_long_keys(n bigint)
RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT jsonb_object_agg(
           CASE e.key
             WHEN 'id' THEN 'customer_account_number'
             WHEN 'age' THEN 'customer_age_in_whole_years'
             WHEN 'tag' THEN 'marketing_segment_label'
             WHEN 'zip' THEN 'postal_code_of_current_residence'
             WHEN 'city' THEN 'city_of_current_residence'
             WHEN 'last' THEN 'family_name_as_registered'
             WHEN 'email' THEN 'primary_contact_email_address'
             WHEN 'active' THEN 'account_currently_active'
             WHEN 'joined' THEN 'date_of_first_registration'
             WHEN 'country' THEN 'country_of_current_residence'
             ELSE e.key
           END, e.value)
  FROM jsonb_each(jvj_doc_small(n)) AS e
$$;

-- The length of a document's i-th item field: base + step * ((r + i) mod cnt), r drawn once per
-- document. Over cnt consecutive items every length occurs once, so the lengths vary from item to
-- item (which is what costs jsonb its compressibility: each length is in a JEntry) while their sum,
-- and so the document's size, is the same in every document.
CREATE OR REPLACE FUNCTION jvj_rot(n bigint, salt int, i int, base int, step int, cnt int)
RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT (base + step * mod(jvj_rand(n, salt) + i, cnt))::int
$$;

-- An order around its items: the top level of the "medium" and "large" shapes (8 members, the
-- shipping address 4). Random tokens of complementary lengths (first + last 18, street + city 21
-- characters), so every order's head is the same size.
CREATE OR REPLACE FUNCTION jvj_order(n bigint, items jsonb)
RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT jsonb_build_object(
    'id', 1000000 + n,
    'first', jvj_token(n, 1, 4 + mod(jvj_rand(n, 12), 9)::int),
    'last', jvj_token(n, 2, 14 - mod(jvj_rand(n, 12), 9)::int),
    'status', jvj_pick(ARRAY['new','paid','sent','done','held','void'], n, 3),
    'created', to_char(date '2024-01-01' + mod(jvj_rand(n, 4), 730)::int, 'YYYY-MM-DD'),
    'shipping', jsonb_build_object(
        'street', jvj_token(n, 6, 6 + mod(jvj_rand(n, 13), 9)::int),
        'number', 100 + mod(jvj_rand(n, 7), 900),
        'zip', 1000 + mod(jvj_rand(n, 8), 9000),
        'city', jvj_token(n, 9, 15 - mod(jvj_rand(n, 13), 9)::int)),
    'items', items,
    'note', jvj_token(n, 11, 10))
$$;

-- Shape "medium": an order of 12 items of 7 fields. Fitted to: compact 1,517.9 bytes (the token
-- lengths: sku 3-14, name 2-35, code 1-5, size 1-11 characters, constant sum per document); pretty
-- 2,381.9 = compact + 855 (the structure: 8 + 4 members at depths 1-2, 12 items of 7 members at
-- depth 3, 4m0 + 6m1 + 7 + k(8j + 10)); the jsonb datum 2,071.9 (the share of numbers: qty, price,
-- the house number and zip; a price of 1.00-9.99 has one digit less than the text budget allows);
-- -16.6 % and +16.6 % (the entropy: 6 jsonb rows a page against 5 compact json rows and 7 pretty
-- json rows, 5/6 and 7/6, need pglz to keep 1,129-1,320 bytes of jsonb and 985-1,128 of pretty json;
-- random tokens set both, and the items' key sets (half "size", half "color"; a quarter "ref"
-- instead of "code") cost jsonb, which stores each object's sorted keys in one block, more than
-- json). lz4 keeps about 10 % more jsonb than pglz, still 6 rows a page: the compact row does not
-- move. Left free: the token characters, qty 1-9, the statuses.
CREATE OR REPLACE FUNCTION jvj_doc_medium(n bigint)
RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT jvj_order(n, (
    SELECT jsonb_agg(jsonb_build_object(
               'sku', jvj_token(n, 1000 + i, jvj_rot(n, 8200, i, 3, 1, 12)),
               'name', jvj_token(n, 2000 + i, jvj_rot(n, 8000, i, 2, 3, 12)),
               'qty', 1 + mod(jvj_rand(n, 3000 + i), 9),
               'price', round((100 + mod(jvj_rand(n, 4000 + i), 900)) / 100.0, 2),
               CASE WHEN mod(jvj_rand(n, 9100 + i), 4) = 0 THEN 'ref' ELSE 'code' END,
                   jvj_token(n, 5000 + i, jvj_rot(n, 8300, i, 1, 1, 5)),
               'gift', mod(jvj_rand(n, 6000 + i), 5) <> 0,
               CASE WHEN mod(jvj_rand(n, 9000 + i), 2) = 0 THEN 'size' ELSE 'color' END,
                   jvj_token(n, 7000 + i, jvj_rot(n, 8100, i, 1, 1, 11))) ORDER BY i)
    FROM generate_series(1, 12) AS i))
$$;

-- Shape "large": an order of 210 short items of 8 fields (about 20 kB). Fitted to: compact 20,532
-- bytes (the item count); +33.0 % with pglz and +22.2 % with lz4 (the entropy: 1-7 random
-- characters of name, 1-3 of sku and code, 1-4 of size, a digit of qty and three of the price per
-- item, the rest constant, so pglz keeps 5.7-5.8 kB of json, three TOAST chunks, and 6.4 kB of
-- jsonb, four; lz4 keeps 8.1 and 9.3 kB). Left free: the constant "unit" (it only adds compressible
-- text). Pretty json is not fitted: see docs/seed-001-documents.md.
CREATE OR REPLACE FUNCTION jvj_doc_large(n bigint)
RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT jvj_order(n, (
    SELECT jsonb_agg(jsonb_build_object(
               'sku', jvj_token(n, 1000 + i, 1 + mod(jvj_rand(n, 1500 + i), 3)::int),
               'name', jvj_token(n, 2000 + i, 1 + mod(jvj_rand(n, 2500 + i), 7)::int),
               'qty', 1 + mod(jvj_rand(n, 3000 + i), 9),
               'cost', round((100 + mod(jvj_rand(n, 4000 + i), 900)) / 100.0, 2),
               'code', jvj_token(n, 5000 + i, 1 + mod(jvj_rand(n, 5500 + i), 3)::int),
               'gift', mod(jvj_rand(n, 6000 + i), 5) <> 0,
               'size', jvj_token(n, 7000 + i, 1 + mod(jvj_rand(n, 8100 + i), 4)::int),
               'unit', 'pcs') ORDER BY i)
    FROM generate_series(1, 210) AS i))
$$;

-- Shape "flat": one object of 780 random strings; the first member is called "first". Fitted to:
-- compact 21,129 bytes (keys "k0001"-"k0779", values of 16 characters and 17 for the first 69
-- members); -22.6 % and -5.5 % (the key/value split: jsonb stores the sorted keys in one block that
-- pglz shrinks, json text does not reach pglz's 25 % and is stored raw; pretty json is compressed).
CREATE OR REPLACE FUNCTION jvj_doc_flat(n bigint)
RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT jsonb_object_agg(CASE WHEN i = 0 THEN 'first' ELSE 'k' || lpad(i::text, 4, '0') END,
                          jvj_token(n, 100 + i, CASE WHEN i <= 68 THEN 17 ELSE 16 END))
  FROM generate_series(0, 779) AS i
$$;

-- Shape "array": 3,500 random integers of 1,000-99,999 (no object, so no key "first"). Fitted to:
-- compact 20,692.3 bytes and jsonb 54,701.6 before compression (the range: 4 or 5 digits of text,
-- a numeric of 8 or 10 bytes plus alignment); +3.2 % pglz, +1.9 % pretty and +40.9 % lz4 follow.
CREATE OR REPLACE FUNCTION jvj_doc_array(n bigint)
RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT jsonb_agg(1000 + mod(jvj_rand(n, i), 99000) ORDER BY i)
  FROM generate_series(1, 3500) AS i
$$;
