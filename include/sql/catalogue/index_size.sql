SELECT pg_relation_size(%(index)s::regclass)
