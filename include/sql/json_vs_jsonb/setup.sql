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

-- A random string of len characters (len <= 21) over the 64 characters of base64: letters,
-- digits, '+' and '/'. A large alphabet keeps it as incompressible as random text is; hex
-- repeats 3-character runs often enough for pglz to find them.
CREATE OR REPLACE FUNCTION jvj_token(n bigint, salt int, len int)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT substr(encode(decode(md5('jvj-001:' || n || ':' || salt), 'hex'), 'base64'), 1, len)
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

-- Word lists the documents draw from (none holds a comma, a colon or a run of spaces).
CREATE OR REPLACE FUNCTION jvj_words(list text)
RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE list
    WHEN 'first' THEN ARRAY['Maria','Jan','Sofia','Lucas','Emma','Noah','Julia','Daan','Anna','Sem',
                            'Eva','Finn','Lotte','Levi','Sara','Milan','Zoe','Bram','Tess','Thijs',
                            'Olivia','Liam','Nora','Jesse','Mila','Ruben','Saar','Luuk','Fleur','Max',
                            'Isabella','Alexander','Charlotte','Sebastiaan','Valentina','Maximilian',
                            'Ivy','Bo','Kai','Elisabeth']
    WHEN 'last' THEN ARRAY['Jansen','de Vries','van den Berg','Bakker','Visser','Smit','Meijer','de Boer',
                           'Mulder','de Groot','Bos','Vos','Peters','Hendriks','van Leeuwen','Dekker',
                           'Brouwer','de Wit','Dijkstra','Smits','de Graaf','van der Meer','Kok','Jacobs',
                           'van Dijk','Schouten','Vermeulen','Willems','Hoekstra','Koster']
    WHEN 'city' THEN ARRAY['Amsterdam','Rotterdam','Utrecht','Eindhoven','Groningen','Tilburg','Almere',
                           'Breda','Nijmegen','Haarlem','Arnhem','Enschede','Amersfoort','Zwolle','Leiden',
                           'Maastricht','Dordrecht','Delft','Antwerp','Ghent','Berlin','Hamburg','Paris','Lyon']
    WHEN 'country' THEN ARRAY['NL','BE','DE','FR','LU','DK','SE','NO','ES','PT','IT','AT','CH','PL','IE','GB']
    WHEN 'tag' THEN ARRAY['new','vip','newsletter','b2b','b2c','mobile','web','store','returning','trial',
                          'premium','basic','churn-risk','referral','partner','student','senior','staff']
    WHEN 'status' THEN ARRAY['new','paid','packed','shipped','delivered','returned','cancelled']
    WHEN 'currency' THEN ARRAY['EUR','USD','GBP','SEK','DKK','CHF']
    WHEN 'product' THEN ARRAY['steel bolt','hex nut','wood screw','wall plug','hinge','door handle',
                              'cable tie','spirit level','tape measure','hammer','chisel','hand saw',
                              'drill bit','paint brush','roller','masking tape','sandpaper','glue gun',
                              'work gloves','safety glasses','ladder','toolbox','pliers','wrench']
    WHEN 'street' THEN ARRAY['Kerkstraat','Schoolstraat','Molenweg','Dorpsstraat','Stationsweg','Julianalaan',
                             'Beatrixstraat','Nieuwstraat','Marktplein','Havenweg','Parklaan','Emmastraat']
    WHEN 'word' THEN ARRAY['please','deliver','before','noon','leave','parcel','with','neighbour','gift',
                           'wrap','invoice','separately','call','on','arrival','back','door','fragile',
                           'handle','care','no','plastic','thanks','again']
  END
$$;

-- Shape "small": a customer record of about 200 bytes compact, with the key the read benchmark reads.
CREATE OR REPLACE FUNCTION jvj_doc_small(n bigint)
RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT jsonb_build_object(
    'id', n,
    'first', jvj_pick(jvj_words('first'), n, 1),
    'last', jvj_pick(jvj_words('last'), n, 2),
    'email', lower(replace(jvj_pick(jvj_words('first'), n, 1) || '.' || jvj_pick(jvj_words('last'), n, 2), ' ', ''))
             || mod(jvj_rand(n, 3), 1000) || '@example.com',
    'age', 18 + mod(jvj_rand(n, 4), 63),
    'city', jvj_pick(jvj_words('city'), n, 5),
    'country', jvj_pick(jvj_words('country'), n, 6),
    'active', mod(jvj_rand(n, 7), 4) <> 0,
    'score', round(mod(jvj_rand(n, 8), 10000) / 100.0, 2),
    'joined', to_char(date '2015-01-01' + mod(jvj_rand(n, 9), 4000)::int, 'YYYY-MM-DD'),
    'tags', jsonb_build_array(jvj_pick(jvj_words('tag'), n, 10), jvj_pick(jvj_words('tag'), n, 11)))
$$;

-- Shape "small_long_keys": the same values under long, descriptive key names. The key "first"
-- keeps its name so the read benchmark does the same work on both small shapes.
CREATE OR REPLACE FUNCTION jvj_doc_small_long_keys(n bigint)
RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT jsonb_object_agg(
           CASE e.key
             WHEN 'id' THEN 'customer_account_identifier'
             WHEN 'last' THEN 'customer_family_name_as_entered'
             WHEN 'email' THEN 'primary_contact_email_address'
             WHEN 'age' THEN 'customer_age_in_whole_years'
             WHEN 'city' THEN 'city_of_current_residence'
             WHEN 'country' THEN 'country_of_current_residence'
             WHEN 'active' THEN 'account_is_currently_active'
             WHEN 'score' THEN 'customer_loyalty_programme_score'
             WHEN 'joined' THEN 'date_customer_first_registered'
             WHEN 'tags' THEN 'marketing_segment_labels'
             ELSE e.key
           END, e.value)
  FROM jsonb_each(jvj_doc_small(n)) AS e
$$;

-- An order with `items` line items: the body of the "medium" and "large" shapes.
CREATE OR REPLACE FUNCTION jvj_order(n bigint, items int)
RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT jsonb_build_object(
    'id', n,
    'first', jvj_pick(jvj_words('first'), n, 1),
    'last', jvj_pick(jvj_words('last'), n, 2),
    'status', jvj_pick(jvj_words('status'), n, 3),
    'created', to_char(timestamp '2025-01-01' + mod(jvj_rand(n, 4), 31536000) * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
    'currency', jvj_pick(jvj_words('currency'), n, 5),
    'shipping', jsonb_build_object(
        'street', jvj_pick(jvj_words('street'), n, 6),
        'number', 1 + mod(jvj_rand(n, 7), 250),
        'zip', (1000 + mod(jvj_rand(n, 8), 9000))::text,
        'city', jvj_pick(jvj_words('city'), n, 9),
        'country', jvj_pick(jvj_words('country'), n, 10)),
    'items', (SELECT jsonb_agg(jsonb_build_object(
                  'sku', 'SKU-' || (10000 + mod(jvj_rand(n, 1000 + i), 90000)),
                  'name', jvj_pick(jvj_words('product'), n, 2000 + i),
                  'qty', 1 + mod(jvj_rand(n, 3000 + i), 12),
                  'price', round((50 + mod(jvj_rand(n, 4000 + i), 20000)) / 100.0, 2),
                  'discount', round(mod(jvj_rand(n, 5000 + i), 30) / 100.0, 2),
                  'in_stock', mod(jvj_rand(n, 6000 + i), 5) <> 0) ORDER BY i)
              FROM generate_series(1, items) AS i),
    'note', (SELECT string_agg(jvj_pick(jvj_words('word'), n, 7000 + w), ' ')
             FROM generate_series(1, 4 + mod(jvj_rand(n, 11), 8)::int) AS w))
$$;

CREATE OR REPLACE FUNCTION jvj_doc_medium(n bigint)
RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT jvj_order(n, 14)
$$;

CREATE OR REPLACE FUNCTION jvj_doc_large(n bigint)
RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT jvj_order(n, 216)
$$;

-- Shape "flat": one object of 780 random 16-character strings; the first member is called "first".
CREATE OR REPLACE FUNCTION jvj_doc_flat(n bigint)
RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT jsonb_object_agg(CASE WHEN i = 0 THEN 'first' ELSE 'k' || lpad(i::text, 4, '0') END, jvj_token(n, 100 + i, 16))
  FROM generate_series(0, 779) AS i
$$;

-- Shape "array": 3,500 random integers below 100,000 (no object, so no key "first").
CREATE OR REPLACE FUNCTION jvj_doc_array(n bigint)
RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT jsonb_agg(mod(jvj_rand(n, i), 100000) ORDER BY i)
  FROM generate_series(1, 3500) AS i
$$;
