-- One key (a path, as text[]) of every document, no index: how many documents have it, and the
-- length of its text (which makes the server produce the value, as an application reading it would).
SELECT count(doc #>> %(path)s::text[]), sum(length(doc #>> %(path)s::text[]))
FROM {table}
