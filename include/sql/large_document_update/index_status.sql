-- The expression index that takes HOT updates away from any change of the document.
CREATE INDEX ON {table} ((payload ->> 'status'));
