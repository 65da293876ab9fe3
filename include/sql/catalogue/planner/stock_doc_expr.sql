-- An inequality on a cast extracted key: the 33 % default, even after CREATE STATISTICS on the uncast text.
SELECT count(*) FROM products_doc WHERE (data ->> 'stock')::int < 10
