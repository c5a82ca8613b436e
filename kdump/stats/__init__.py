"""``kdump stats``: the numbers of a log (:mod:`.counts`) and the exact key counts of a compaction
(:mod:`.keytable`, compiled twin ``_keytable.pyx``). Kept empty: ``kdump._backend`` imports the compiled key
table at start-up."""
