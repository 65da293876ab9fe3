-- Change one key of every text document in place: parse, set, write the whole text again, store the row.
UPDATE {table} SET doc = json_set(doc, :path, :value);
