"""Arena tournaments (docs/tournaments.md): the pure rules (``arena``: points, standings, the prize
split, pairing) and the runner that opens the tables (``runner``)."""
