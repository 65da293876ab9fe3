-- Equality on an extracted key: without statistics on the expression, the 0.5 % default.
SELECT count(*) FROM products_doc WHERE data ->> 'color' = 'red'
