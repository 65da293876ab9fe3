-- The seed's JSON_TABLE query (PostgreSQL 17+).
SELECT jt.*
FROM products_doc,
     JSON_TABLE(data, '$' COLUMNS (
         category text    PATH '$.category',
         price    numeric PATH '$.price',
         stock    int     PATH '$.stock')) AS jt
WHERE products_doc.id = %(id)s
