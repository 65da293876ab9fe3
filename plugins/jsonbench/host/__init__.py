"""The benchmark host: who holds it (:mod:`.lease`), how busy it is (:mod:`.load`), what it is (:mod:`.facts`).

One engine measures at a time on a host; the lease says which, the load says whether anything else
competes for the CPU while it measures, and the facts (cores, memory, kernel) go into every row.
"""
