"""How many rows a report lists when the user does not say (a light module: the command line's help reads it)."""

#: the figures furthest off their prediction that the full ``roofline accuracy`` lists (``--worst N`` sets it)
WORST_LISTED = 10
