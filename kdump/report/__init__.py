"""What a run found and how it ends: finding codes (:mod:`.codes`), the findings model and collector
(:mod:`.findings`), the one exit-code policy (:mod:`.outcome`). Checkers fill it; renderers and commands read it."""
