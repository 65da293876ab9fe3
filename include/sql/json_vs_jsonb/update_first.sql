-- Change one key in every document. json has no in-place setter: the document goes through jsonb
-- and back, which is also how an application would have to do it in SQL (a pretty json document
-- comes back in jsonb's spacing).
UPDATE {table}
SET doc = jsonb_set(doc::jsonb, ARRAY['first'], to_jsonb(upper(doc->>'first')))::{type}
