-- The same JSON_TABLE over every document: the per-row decode cost still applies.
SELECT count(*), sum(jt.price), sum(jt.stock)
FROM products_doc,
     JSON_TABLE(data, '$' COLUMNS (
         category text    PATH '$.category',
         price    numeric PATH '$.price',
         stock    int     PATH '$.stock')) AS jt
