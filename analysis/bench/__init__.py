"""What `niwa bench` runs (figures, not tests): engine against oracle playout speed
(playouts), search speed next to the engine's limits (search) and the suite behind
`niwa bench --suite` (suite). Campaigns built on them live in the repository's bench/
folders, not in the package."""
