-- One key moves from the rest of the document into its column (both set from the old row).
UPDATE {table} SET {column} = json_extract("_rest", :path), "_rest" = jsonb_remove("_rest", :path);
